import { ProblemError } from "@c402/problems";

/** The problem a call refused with (fails the test when it succeeded or threw something else). */
export async function problemOf(p: Promise<unknown>): Promise<ProblemError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  throw new Error("expected a problem");
}
