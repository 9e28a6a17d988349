/**
 * Starts all five platform fakes at once, for the tool tests and the local demo shop (`npm start`).
 * Tools keep their real configuration (`https://demo-webshop.myshopify.com`, …); `originOverrides`
 * tells `createHttpGet` to send those origins to the fakes instead.
 */
import { type AllowedEndpoint, parseAllowedEndpoint } from "#functions/net/outbound-address";
import type { PlatformFake } from "#test/fakes/platforms/fake-server";
import { lightspeedDemo, startLightspeedFake } from "#test/fakes/platforms/lightspeed";
import { picqerDemo, startPicqerFake } from "#test/fakes/platforms/picqer";
import { sendcloudDemo, startSendcloudFake } from "#test/fakes/platforms/sendcloud";
import { shopifyDemo, startShopifyFake } from "#test/fakes/platforms/shopify";
import { startWooCommerceFake, wooDemo } from "#test/fakes/platforms/woocommerce";

export type { Fault, LoggedRequest, PlatformFake } from "#test/fakes/platforms/fake-server";

export const platformDemos = {
  woocommerce: wooDemo,
  shopify: shopifyDemo,
  lightspeed: lightspeedDemo,
  sendcloud: sendcloudDemo,
  picqer: picqerDemo,
} as const;

export type PlatformName = keyof typeof platformDemos;

export interface PlatformFakes {
  woocommerce: PlatformFake;
  shopify: PlatformFake;
  lightspeed: PlatformFake;
  sendcloud: PlatformFake;
  picqer: PlatformFake;
  /** Real origin → fake base URL, for `createHttpGet({ originOverrides, allowPrivate })`. */
  originOverrides: Record<string, string>;
  /** The fakes' loopback endpoints: what the outbound-address guard must let through to reach them. */
  allowPrivate: AllowedEndpoint[];
  /** Clears every request log and pending fault. */
  reset(): void;
  stop(): Promise<void>;
}

/** `ports` pins ports (the demo); tests leave them out and get free ones. */
export async function startPlatformFakes(
  ports: Partial<Record<PlatformName, number>> = {},
): Promise<PlatformFakes> {
  const [woocommerce, shopify, lightspeed, sendcloud, picqer] = await Promise.all([
    startWooCommerceFake(ports.woocommerce),
    startShopifyFake(ports.shopify),
    startLightspeedFake(ports.lightspeed),
    startSendcloudFake(ports.sendcloud),
    startPicqerFake(ports.picqer),
  ]);
  const fakes = { woocommerce, shopify, lightspeed, sendcloud, picqer };
  const all = Object.values(fakes);
  return {
    ...fakes,
    originOverrides: Object.fromEntries(
      (Object.keys(fakes) as PlatformName[]).map((name) => [platformDemos[name].origin, fakes[name].baseUrl]),
    ),
    allowPrivate: all.map((fake) => parseAllowedEndpoint(new URL(fake.baseUrl).host)),
    reset: () => {
      for (const fake of all) fake.reset();
    },
    stop: async () => {
      await Promise.all(all.map((fake) => fake.stop()));
    },
  };
}
