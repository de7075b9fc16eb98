import { defineRaceAgents, slowAcknowledgements } from './parked-race-fixtures.js';
import { parkedRaceSuite } from './parked-race-suite.js';

// One process: the kernel that parked the operation makes both calls.
parkedRaceSuite('gate attack: racing calls on a parked operation, one kernel (SQLite file)', async (start) => {
  const k = await start();
  defineRaceAgents(k);
  return { parker: k, first: k, second: k };
});

// One process after a restart: the operation was parked by another kernel, so this one loads it from the store.
parkedRaceSuite('gate attack: racing calls on a parked operation loaded from the store, one kernel (SQLite file)', async (start) => {
  const parker = await start();
  defineRaceAgents(parker);
  const k = await start();
  return { parker, first: k, second: k };
});

// One process, its store slow to acknowledge commits: a second call reads the decision's commit before the decision
// has heard back from the store (two copies of the operation in one process ran the approved tool twice).
parkedRaceSuite('gate attack: racing calls on a parked operation, one kernel whose store acknowledges late (SQLite file)', async (start) => {
  const k = await start();
  defineRaceAgents(k);
  slowAcknowledgements(k);
  return { parker: k, first: k, second: k };
});

// One process on the local PostgreSQL: commits are acknowledged over the network.
parkedRaceSuite(
  'gate attack: racing calls on a parked operation, one kernel (PostgreSQL schema)',
  async (start) => {
    const k = await start();
    defineRaceAgents(k);
    return { parker: k, first: k, second: k };
  },
  'postgres',
);
