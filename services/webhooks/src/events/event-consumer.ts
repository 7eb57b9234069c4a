import { decodeEnvelope, type Bus, type Subscription } from "@c402/bus";
import type { Dispatcher } from "../domain/dispatcher";
import { EVENT_SOURCES, sourceOf } from "../domain/event-catalogue";

/** The consumer group of a topic's events: webhooks.<the topic's last segment>, e.g. webhooks.payment-settled. */
export const consumerGroupOf = (topic: string) => `webhooks.${topic.split(".").pop()}`;

/** The topics webhook events come from (every source of the catalogue). */
export const SOURCE_TOPICS = [...new Set(EVENT_SOURCES.map((s) => s.topic))];

/**
 * Subscribes to every topic a webhook event comes from. Each event is
 * recorded once with its deliveries (keyed by the event id: the insert is
 * its own dedupe, so no processed-event row is needed); the offset is
 * committed after that commit, so a crash redelivers rather than loses.
 */
export async function subscribeWebhookSources(bus: Bus, dispatcher: Dispatcher): Promise<Subscription[]> {
  return Promise.all(
    SOURCE_TOPICS.map((topic) =>
      bus.subscribe({
        topic,
        group: consumerGroupOf(topic),
        handler: async (message) => void (await dispatcher.fanOutEach(webhookEventsOf(topic, [message]))),
        // A fetch's events are looked at in one statement (most have no receiver).
        handleMany: async (messages) => void (await dispatcher.fanOutEach(webhookEventsOf(topic, messages))),
      }),
    ),
  );
}

/** The webhook events among bus messages of `topic` (types no webhook is made of are left out). */
function webhookEventsOf(topic: string, messages: { value: Uint8Array }[]) {
  return messages.flatMap((message) => {
    const envelope = decodeEnvelope(message.value);
    const source = sourceOf(topic, envelope.type);
    return source ? [{ source, envelope }] : [];
  });
}
