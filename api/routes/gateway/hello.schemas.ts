import Joi from 'joi';

export interface HelloResponse {
  message: string;
}

export const helloResponse = Joi.object<HelloResponse>({
  message: Joi.string().required().example('Hello from the platform gateway'),
});
