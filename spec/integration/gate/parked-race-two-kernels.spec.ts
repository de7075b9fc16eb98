import { defineRaceAgents } from './parked-race-fixtures.js';
import { parkedRaceSuite } from './parked-race-suite.js';

// Two kernels on one SQLite file (each its own lease owner, as two processes are): only the store's compare-and-swap
// and leases can decide. The kernel that parked the operation makes the first call, another one the second.
parkedRaceSuite('gate attack: racing calls on a parked operation, two kernels on one SQLite file', async (start) => {
  const parker = await start();
  defineRaceAgents(parker);
  const other = await start();
  return { parker, first: parker, second: other };
});

// Neither caller ran it: both load it from the store.
parkedRaceSuite('gate attack: racing calls on a parked operation, two kernels that did not park it', async (start) => {
  const parker = await start();
  defineRaceAgents(parker);
  return { parker, first: await start(), second: await start() };
});

// The same on the local PostgreSQL (a schema of the spec's own): every commit is a network round trip, so the window
// between a decision's write and its acknowledgement is real.
parkedRaceSuite(
  'gate attack: racing calls on a parked operation, two kernels on one PostgreSQL schema',
  async (start) => {
    const parker = await start();
    defineRaceAgents(parker);
    const other = await start();
    return { parker, first: parker, second: other };
  },
  'postgres',
);
