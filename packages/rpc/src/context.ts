export * from "@c402/request-context";
