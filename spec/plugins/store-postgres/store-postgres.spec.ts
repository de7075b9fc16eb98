import { describeStoreContract } from '../store-contract.js';
import { usePostgresSchemas } from '../../helpers/postgres-fixtures.js';

/** The shared Store contract (with its submissions, tool-step and prune parts) against the local PostgreSQL, one schema per test. */
describe('store-postgres', function () {
  this.timeout(20_000);
  const schemas = usePostgresSchemas('contract');
  describeStoreContract('store-postgres', () => schemas.store());
});
