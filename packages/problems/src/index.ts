// RFC 9457 problems: the error every layer throws and the document the gateway answers with.
export * from "./problem-error";
export { notChargedProblem, packageKeyRefusedProblem, rehearsalCapProblem, type UnchargedCall } from "./charge-table";
