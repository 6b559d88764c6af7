import { defineUpdate } from '@temporalio/workflow';

/** The update of bench/money/noop.workflow.ts: answers the local activity's result (as transferDone does a transfer's). */
export const noopDone = defineUpdate<string>('noopDone');
