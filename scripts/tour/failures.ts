// The two ways a step fails, told apart because a poll (wait.ts) tries again through the second.

/** An expectation that did not hold: its message is what the step's line says after the arrow. */
export class StepFailed extends Error {}

/**
 * No answer (refused, reset, timed out), a 502/503/504, or gRPC UNAVAILABLE: what a fault passing
 * through looks like. A poll tries again until its deadline; a single request fails with it.
 */
export class Unavailable extends StepFailed {}
