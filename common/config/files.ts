import Joi from 'joi';
import { setting } from './setting';

/** The object store (S3 API) and the virus scanner files pass through. */
export const filesSettings = {
  s3: {
    endPoint: setting('S3_ENDPOINT', Joi.string().default('127.0.0.1')),
    port: setting('S3_PORT', Joi.number().port().default(9000)),
    useSSL: setting('S3_USE_SSL', Joi.boolean().default(false)),
    accessKey: setting('S3_ACCESS_KEY', Joi.string().default('platform')),
    secretKey: setting('S3_SECRET_KEY', Joi.string().default('platform-secret')),
    bucket: setting('S3_BUCKET', Joi.string().pattern(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/).default('platform')),
    region: setting('S3_REGION', Joi.string().default('us-east-1')),
  },
  clamav: {
    host: setting('CLAMAV_HOST', Joi.string().default('127.0.0.1')),
    port: setting('CLAMAV_PORT', Joi.number().port().default(3310)),
  },
};
