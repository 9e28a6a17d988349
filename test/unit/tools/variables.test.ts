import { describe, expect, it } from "vitest";
import {
  checkCollected,
  cleanValue,
  extractValues,
  isValidValue,
  sameValue,
  type ToolVariable,
} from "#functions/tools/variables";

const orderNumber: ToolVariable = {
  name: "order_number",
  label: "order number",
  description: "",
  kind: "order_number",
};
const email: ToolVariable = { name: "email", label: "e-mail address", description: "", kind: "email" };
const trackingCode: ToolVariable = {
  name: "tracking_code",
  label: "tracking code",
  description: "",
  kind: "tracking_code",
};
const postalCode: ToolVariable = {
  name: "postal_code",
  label: "postal code",
  description: "",
  kind: "postal_code",
};

describe("extractValues: order numbers", () => {
  it.each([
    ["Where is my order #1001?", ["1001"]],
    ["order 1001 hasn't arrived", ["1001"]],
    ["Order number: 1001.", ["1001"]],
    ["My order no. 1001 please", ["1001"]],
    ["Mijn bestelnummer is 1001 en mijn mail jan@example.nl", ["1001"]],
    ["Waar blijft bestelling #1001?", ["1001"]],
    ["Meine Bestellnummer lautet 2024-0042!", ["2024-0042"]],
    ["Bestellung Nr. 1001 ist noch nicht da", ["1001"]],
    ["ma commande n° 1001 n'est pas arrivée", ["1001"]],
    ["¿Dónde está mi pedido 1001?", ["1001"]],
    ["ordernummer ORD00002", ["ORD00002"]],
    ["#1001", ["1001"]],
    ["1001", ["1001"]],
    ["  #WEB-2002. ", ["WEB-2002"]],
  ])("%s → %j", (text, expected) => {
    expect(extractValues("order_number", text)).toEqual(expected);
  });

  it.each([
    "I ordered 2 shirts",
    "order 5 days ago",
    "my order from 12-03-2024 is late",
    "Hello, I have a question about my order",
    "call me on 0612345678",
    "mail me at order1001@example.com",
  ])("finds nothing in %j", (text) => {
    expect(extractValues("order_number", text)).toEqual([]);
  });
});

describe("extractValues: e-mail addresses", () => {
  it.each([
    ["my e-mail is Jan.Jansen@Example.NL.", ["Jan.Jansen@Example.NL"]],
    ["(jan+shop@example.co.uk), thanks", ["jan+shop@example.co.uk"]],
    ["mailto:anna@example.com", ["anna@example.com"]],
    ["Order #1001, e-mail: a@b.io and also a@b.io", ["a@b.io"]],
    ["no e-mail here @ all", []],
  ])("%s → %j", (text, expected) => {
    expect(extractValues("email", text)).toEqual(expected);
  });
});

describe("extractValues: tracking codes", () => {
  it.each([
    ["Mijn track & trace code is 3SYZXG192847563", ["3SYZXG192847563"]],
    ["tracking number: 1Z999AA10123456784.", ["1Z999AA10123456784"]],
    ["Sendungsnummer 00340434161234567890", ["00340434161234567890"]],
    ["here it is: JVGL0612345678901234, postcode 1012 AB", ["JVGL0612345678901234"]],
    ["code de suivi 3syzxg192847563", ["3SYZXG192847563"]],
  ])("%s → %j", (text, expected) => {
    expect(extractValues("tracking_code", text)).toEqual(expected);
  });

  it.each(["call me on 0612345678", "order 1001", "my e-mail is 3syzxg192847563@example.com"])(
    "finds nothing in %j",
    (text) => {
      expect(extractValues("tracking_code", text)).toEqual([]);
    },
  );
});

describe("extractValues: postal codes", () => {
  it.each([
    ["Mijn postcode is 5611 EM.", ["5611 EM"]],
    ["postcode: 5611em", ["5611EM"]],
    ["3SYZXG192847563 / 5611 EM", ["5611 EM"]],
    ["Die PLZ ist 10115", ["10115"]],
    ["zip code 94103-1234", ["94103-1234"]],
    ["I live at SW1A 1AA", ["SW1A 1AA"]],
  ])("%s → %j", (text, expected) => {
    expect(extractValues("postal_code", text)).toEqual(expected);
  });

  it.each(["my order 1234 is late", "bestelling 1001 is er nog niet", "order 12345"])(
    "finds nothing in %j",
    (text) => {
      expect(extractValues("postal_code", text)).toEqual([]);
    },
  );
});

describe("clean / validate / compare", () => {
  it("normalises what visitors type", () => {
    expect(cleanValue("order_number", " #1001 ")).toBe("1001");
    expect(cleanValue("postal_code", "5611  em")).toBe("5611 EM");
    expect(cleanValue("tracking_code", "3syz xg19-2847563")).toBe("3SYZXG192847563");
    expect(cleanValue("email", "<Jan@Example.nl>")).toBe("Jan@Example.nl");
  });

  it("rejects values of the wrong shape", () => {
    expect(isValidValue("email", "jan@example")).toBe(false);
    expect(isValidValue("order_number", "abc")).toBe(false);
    expect(isValidValue("order_number", "1001; DROP")).toBe(false);
    expect(isValidValue("tracking_code", "12345")).toBe(false);
    expect(isValidValue("postal_code", "ABCDEF")).toBe(false);
  });

  it("compares per kind", () => {
    expect(sameValue("email", "Jan@Example.NL", "jan@example.nl")).toBe(true);
    expect(sameValue("order_number", "#1001", "1001")).toBe(true);
    expect(sameValue("order_number", 1001, "1001")).toBe(true);
    expect(sameValue("order_number", "10010", "1001")).toBe(false);
    expect(sameValue("postal_code", "5611 EM", "5611em")).toBe(true);
    expect(sameValue("postal_code", "5611 EM", "5611 EN")).toBe(false);
    expect(sameValue("email", undefined, "")).toBe(false);
  });
});

describe("checkCollected", () => {
  const required = [orderNumber, email];

  it("is ready when every value is valid and typed by the visitor, and returns them cleaned", () => {
    // Prepare
    const visitor = ["Hoi, waar is bestelling #1001?", "mijn e-mail is JAN@example.nl"];
    // Act
    const check = checkCollected(required, { order_number: "#1001", email: "jan@example.nl" }, visitor);
    // Assess
    expect(check).toEqual({ ready: true, values: { order_number: "1001", email: "jan@example.nl" } });
  });

  it("lists what is absent", () => {
    const check = checkCollected(required, { order_number: "1001" }, ["order 1001"]);
    expect(check).toEqual({
      ready: false,
      missing: [{ name: "email", label: "e-mail address", reason: "absent" }],
      invalid: [],
    });
  });

  it("treats a value the visitor never typed as missing (the model made it up)", () => {
    const check = checkCollected(required, { order_number: "1001", email: "john@example.com" }, [
      "order 1001, my mail is jan@example.nl",
    ]);
    expect(check).toEqual({
      ready: false,
      missing: [{ name: "email", label: "e-mail address", reason: "not_given_by_visitor" }],
      invalid: [],
    });
  });

  it("reports invalid values separately", () => {
    const check = checkCollected(required, { order_number: "1001", email: "jan@example" }, [
      "1001 jan@example",
    ]);
    expect(check).toEqual({
      ready: false,
      missing: [],
      invalid: [{ name: "email", label: "e-mail address" }],
    });
  });

  it("does not count an order number that only appears inside a longer one", () => {
    const check = checkCollected([orderNumber], { order_number: "1001" }, ["my order is 10010"]);
    expect(check.ready).toBe(false);
  });

  it("matches postal codes and tracking codes however they were spaced", () => {
    const check = checkCollected(
      [trackingCode, postalCode],
      { tracking_code: "3SYZXG192847563", postal_code: "5611EM" },
      ["code 3syzxg 192847563", "postcode 5611 em"],
    );
    expect(check).toEqual({
      ready: true,
      values: { tracking_code: "3SYZXG192847563", postal_code: "5611EM" },
    });
  });

  it("accepts numbers from the model and ignores non-object input", () => {
    expect(checkCollected([orderNumber], { order_number: 1001 }, ["#1001"]).ready).toBe(true);
    expect(checkCollected([orderNumber], "1001", ["#1001"]).ready).toBe(false);
  });
});
