import { catalogV1, checkoutStatusName, checkoutStatusToProto, type CheckoutStatusName } from "../src";

describe("wire enums as words", () => {
  it("maps every checkout status both ways, and nothing for UNSPECIFIED", () => {
    for (const name of ["open", "paid", "expired", "void"] as CheckoutStatusName[]) expect(checkoutStatusName(checkoutStatusToProto(name))).toBe(name);
    expect(checkoutStatusName(catalogV1.CheckoutStatus.UNSPECIFIED)).toBeUndefined();
    expect(checkoutStatusName(99 as catalogV1.CheckoutStatus)).toBeUndefined();
  });
});
