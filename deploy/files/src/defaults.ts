import { defaultOf, type Setting } from "@c402/config";
import { gatewayConfigSpec, gatewayDistributedSpec } from "@c402/gateway";
import { identityConfigSpec } from "@c402/identity";
import { paymentsConfigSpec } from "@c402/payments";
import { distributedInfraSpec, kafkaSpec, observabilitySpec } from "@c402/runtime";

/** A variable as a deploy file sets it: name and text value. */
export type Variable = readonly [name: string, value: string];

/** The setting at its service's default, so the deploy files never restate a default. */
export function atDefault(setting: Setting<unknown>): Variable {
  return [setting.env, String(defaultOf(setting))];
}

/** The defaults the deploy files need, each read from the config module that owns it. */
export function serviceDefaults() {
  return {
    /** The gateway's HTTP port (PORT). */
    gatewayPort: defaultOf(gatewayConfigSpec.port),
    /** LOG_LEVEL of the gRPC services, and of the gateway. */
    logLevel: atDefault(distributedInfraSpec.logLevel),
    gatewayLogLevel: atDefault(gatewayDistributedSpec.logLevel),
    /** Gateway settings published in the ConfigMap at their defaults, for operators to change. */
    gatewaySettings: [atDefault(gatewayConfigSpec.serviceName), atDefault(gatewayConfigSpec.authRateLimitPerMinute)],
    /** identity settings published in the ConfigMap at their defaults. */
    identitySettings: [atDefault(identityConfigSpec.challengeTtlSeconds), atDefault(identityConfigSpec.mailFrom)],
    /** Kafka's connection and the shape of the topics created, at their defaults (the production overlay sets 3 replicas). */
    kafkaSettings: [
      atDefault(kafkaSpec.kafkaTls),
      atDefault(kafkaSpec.kafkaSaslMechanism),
      atDefault(kafkaSpec.kafkaTopicPartitions),
      atDefault(kafkaSpec.kafkaTopicReplicationFactor),
    ],
    /** Every process serves its Prometheus metrics on this port of the pod (METRICS_PORT). */
    metricsPort: defaultOf(observabilitySpec.metricsPort),
    /** The metrics endpoint listens on the pod's address (the default is loopback, for a developer's machine). */
    metricsSettings: [[observabilitySpec.metricsHost.env, "0.0.0.0"] as Variable, atDefault(observabilitySpec.metricsPort)],
    /** payments' chain settings published in the ConfigMap at their defaults. */
    paymentsSettings: [atDefault(paymentsConfigSpec.confirmations), atDefault(paymentsConfigSpec.rpcTimeoutMs), atDefault(paymentsConfigSpec.settleTimeoutMs)],
  };
}

export type ServiceDefaults = ReturnType<typeof serviceDefaults>;
