import Joi from 'joi';
import { taskQueues } from '../temporal/task-queues';
import { setting } from './setting';

/** E-mail: the SMTP server, the sender, the test mailbox's API, where links point, where mail workflows run. */
export const notifySettings = {
  mail: {
    smtpHost: setting('SMTP_HOST', Joi.string().default('127.0.0.1')),
    smtpPort: setting('SMTP_PORT', Joi.number().port().default(1025)),
    from: setting('MAIL_FROM', Joi.string().default('Platform <no-reply@platform.local>')),
    mailpitApiUrl: setting('MAILPIT_API_URL', Joi.string().uri().default('http://127.0.0.1:8025')),
    /** The web application the links in e-mails open (they carry token=<value> in the query). */
    linkBaseUrl: setting('APP_BASE_URL', Joi.string().uri({ scheme: ['http', 'https'] }).default('http://127.0.0.1:3000'),
      (url) => url.replace(/\/+$/, '')),
    /** The task queue the gateway starts mail workflows on (tests point it at a queue of their own). */
    taskQueue: setting('NOTIFY_TASK_QUEUE', Joi.string().default(taskQueues.notify)),
  },
};
