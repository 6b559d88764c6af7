import { createActivities, distinctActivities, type ActivityDeps } from '../../../activities';
import { createLogger } from '../../../common/logger';

/**
 * An activity is found by its name on its domain's task queue: two factories registering one name
 * would leave one of them unreachable, so the worker refuses to start (activities/index.ts).
 */
describe('activity names', () => {
  const activity = () => Promise.resolve();

  it('a name two factories register is refused, naming it', () => {
    expect(() => distinctActivities({ scanFile: activity, promote: activity }, { promote: activity }))
      .toThrow('two activity factories register the activity promote');
  });

  it('every domain\'s activities are built with distinct names, and no name serves two domains', () => {
    // Nothing is reached while the activities are only built: the pools, store and mailer are never called here.
    const deps = { appPool: {}, fleetPool: {}, objectStore: {}, smtp: {}, logger: createLogger('test', 'silent') } as unknown as ActivityDeps;
    const names = Object.values(createActivities(deps)).flatMap((group) => Object.keys(group));
    expect(names.length).toBeGreaterThan(30);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
  });
});
