import { paymentsV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { createClient, RpcServer, type ServiceClient, type ServiceImplementation } from "../src";

/** The contracts' protovalidate rules, enforced by every RpcServer before an implementation runs. */
describe("contract rules at the service boundary", () => {
  let server: RpcServer;
  let client: ServiceClient<typeof paymentsV1.PaymentsService>;
  const reached: string[] = [];

  beforeAll(async () => {
    server = new RpcServer();
    const quotePayment: ServiceImplementation<typeof paymentsV1.PaymentsService>["quotePayment"] = async (req) => {
      reached.push(req.checkoutId);
      return { accepts: [] };
    };
    const unused = async () => {
      throw new ProblemError("internal", "not part of this test");
    };
    const others = Object.fromEntries(paymentsV1.PaymentsService.methods.map((m) => [m.localName, unused]));
    server.add(paymentsV1.PaymentsService, { ...others, quotePayment } as unknown as ServiceImplementation<typeof paymentsV1.PaymentsService>);
    client = createClient(paymentsV1.PaymentsService, `127.0.0.1:${await server.listen("127.0.0.1", 0)}`);
  });

  afterAll(async () => {
    client.close();
    await server.stop();
  });

  it("lets a request that keeps the rules through", async () => {
    await client.quotePayment({ checkoutId: "chk_1", face: paymentsV1.Face.LIVE });
    expect(reached).toEqual(["chk_1"]);
  });

  it("refuses one that breaks them with invalid-request naming every field, and the implementation never runs", async () => {
    const err = await client.quotePayment({ checkoutId: "", face: paymentsV1.Face.UNSPECIFIED }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect(err).toMatchObject({ slug: "invalid-request", message: "The request breaks the payments.v1.QuotePaymentRequest contract." });
    expect((err as ProblemError).errors?.map((e) => e.field).sort()).toEqual(["checkout_id", "face"]);
    const unknownFace = await client.quotePayment({ checkoutId: "chk_2", face: 7 as paymentsV1.Face }).catch((e: unknown) => e);
    expect(unknownFace).toMatchObject({ slug: "invalid-request", errors: [{ field: "face" }] });
    expect(reached).toEqual(["chk_1"]);
  });
});
