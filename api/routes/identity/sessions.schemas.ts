import Joi from 'joi';
import { uuid } from '../../http/ids';

export interface SessionIdParams {
  id: string;
}

export const sessionIdParams = Joi.object<SessionIdParams>({ id: uuid.required() });

const session = Joi.object({
  id: Joi.string().uuid().required(),
  createdAt: Joi.string().isoDate().required(),
  lastUsedAt: Joi.string().isoDate().required().description('When the session last refreshed its tokens (its login, if never).'),
  ip: Joi.string().allow(null).required().description('The client address of the session\'s latest login or refresh.'),
  userAgent: Joi.string().allow(null).required().description('The User-Agent of the session\'s latest login or refresh.'),
  current: Joi.boolean().required().description('Whether the request\'s own access token belongs to this session.'),
});

export const sessionList = Joi.object({ data: Joi.array().items(session).required() });
