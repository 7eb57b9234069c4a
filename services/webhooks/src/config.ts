/** The webhooks service reads only the distributed infrastructure settings so far. */
export const webhooksConfigSpec = {};
