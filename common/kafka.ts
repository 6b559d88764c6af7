import { Kafka, logLevel, type Admin, type Producer, type Consumer, type ConsumerConfig, type Message } from 'kafkajs';
import type { Logger } from './logger';

/**
 * Every Kafka call of the platform goes through this module, so the client library (kafkajs, with
 * no release since 2023) can be replaced without touching the domains.
 */
export interface KafkaSettings {
  brokers: string[];
  clientId: string;
}

export type { Admin, Producer, Consumer, Message };

export function createKafka({ brokers, clientId }: KafkaSettings, logger?: Logger): Kafka {
  return new Kafka({
    clientId,
    brokers,
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    // A bounded retry: callers (relay, health check) decide what happens when the broker is down.
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 2000 },
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, label, log }) => {
      logger?.warn({ namespace, kafka: log }, `kafka ${label.toLowerCase()}: ${log.message}`);
    },
  });
}

/**
 * A producer for events that must stay in order per key and not be doubled by client retries:
 * idempotent, one request in flight.
 */
export function createOrderedProducer(kafka: Kafka): Producer {
  return kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
}

export function createConsumer(kafka: Kafka, config: ConsumerConfig): Consumer {
  return kafka.consumer(config);
}

/** A cheap liveness question to the broker: the cluster's metadata. */
export async function describeBroker(admin: Admin): Promise<{ brokers: number; controller: number | null }> {
  const cluster = await admin.describeCluster();
  return { brokers: cluster.brokers.length, controller: cluster.controller };
}
