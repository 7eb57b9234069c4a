import { SCHEDULE_CANCEL_REASON_MAX } from "../http/schedule-schemas";
import { SCHEDULE_STATUSES } from "../views/schedules";
import { asQuery, pageProperties, sellerTool, type McpToolDefinition } from "./tool";

// Recurring series: the seller's tools run the /v1/schedules routes' operations, with their scopes.

const SCHEDULE_ID = { type: "string", minLength: 1, maxLength: 64, description: "The series' id (sch_…)." } as const;

export const listSchedulesTool: McpToolDefinition = ({ schedules }) =>
  sellerTool({
    name: "list_schedules",
    title: "List recurring series",
    description:
      "The seller's recurring series of the credential's mode, newest first (as GET /v1/schedules): checkout_id and status (active, completed, cancelled, lapsed) filter. Paged like every list.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        checkout_id: { type: "string", minLength: 1, maxLength: 64, description: "Only the series of this checkout." },
        status: { type: "string", enum: [...SCHEDULE_STATUSES], description: "Only series in this status." },
        ...pageProperties,
      },
    },
    scope: "read_only",
    run: async (args, seller) => schedules.list(seller, asQuery(args)),
  });

export const getScheduleTool: McpToolDefinition = ({ schedules }) =>
  sellerTool({
    name: "get_schedule",
    title: "Get a recurring series",
    description: "One of the seller's series (as GET /v1/schedules/{id}): its status, what is paid through, the next charge and every period with its receipt.",
    inputSchema: { type: "object", additionalProperties: false, required: ["id"], properties: { id: SCHEDULE_ID } },
    scope: "read_only",
    run: async (args, seller) => schedules.get(seller, String(args.id)),
  });

export const cancelScheduleTool: McpToolDefinition = ({ schedules }) =>
  sellerTool({
    name: "cancel_schedule",
    title: "Cancel a recurring series",
    description:
      "Cancels one of the seller's series (as POST /v1/schedules/{id}/cancel): no held period is charged from then on; settled periods stay settled. A series already ended is answered as it is (already_ended).",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      required: ["id"],
      properties: { id: SCHEDULE_ID, reason: { type: "string", minLength: 1, maxLength: SCHEDULE_CANCEL_REASON_MAX, description: "Why (optional)." } },
    },
    scope: "payments",
    run: async (args, seller) => schedules.cancel(seller, String(args.id), args.reason === undefined ? {} : { reason: args.reason }),
  });
