/**
 * The retrieval set: the demo shop's documents as passages (its shipping and returns terms, its FAQ,
 * its web pages, its product care guide), cut the way the ingestion pipeline cuts them (one passage
 * per section, list or Q/A, each with its title path), and 64 visitors' questions, most of them
 * paraphrases that share few words with the passage that answers them, each with the passages that
 * answer it. `npm run bench` measures recall@5 and MRR over it for lexical, semantic and hybrid
 * retrieval (bin/bench-knowledge.ts).
 */
import type { IndexedPassage } from "#functions/knowledge/search-index";

const terms = "Shipping and returns terms";
const faq = "Frequently asked questions";
const site = "demo-shop.example";
const care = "Product care and warranty guide";

const passage = (
  passageId: string,
  sourceTitle: string,
  titlePath: string[],
  text: string,
  extra: { url?: string; page?: number } = {},
): IndexedPassage => ({ passageId, sourceId: sourceTitle, sourceTitle, titlePath, text, ...extra });

export const demoShopPassages: IndexedPassage[] = [
  // Shipping and returns terms (a PDF: one passage per section, with its page)
  passage(
    "terms-delivery-times",
    terms,
    ["1. Delivery", "1.1 Delivery times"],
    "Orders placed on a working day before 17:00 are dispatched the same day. Delivery in the Netherlands and Belgium takes 1 to 2 working days; elsewhere in the European Union it takes 3 to 5 working days.",
    { page: 1 },
  ),
  passage(
    "terms-shipping-costs",
    terms,
    ["1. Delivery", "1.2 Shipping costs"],
    "Shipping costs 4.95 euro per order within the Netherlands and Belgium and 9.95 euro to other EU countries. Orders of 50 euro or more ship free of charge within the Netherlands and Belgium.",
    { page: 1 },
  ),
  passage(
    "terms-carriers",
    terms,
    ["1. Delivery", "1.3 Carriers and tracking"],
    "Parcels are sent with PostNL or DHL. As soon as your parcel leaves our warehouse you receive an e-mail with a tracking link, so you can follow it until it arrives.",
    { page: 1 },
  ),
  passage(
    "terms-non-eu",
    terms,
    ["1. Delivery", "1.4 Countries outside the EU"],
    "We do not ship outside the European Union at the moment, including the United Kingdom, Switzerland and Norway.",
    { page: 2 },
  ),
  passage(
    "terms-pickup-points",
    terms,
    ["1. Delivery", "1.5 Pick-up points"],
    "Instead of home delivery you can choose a PostNL or DHL pick-up point at checkout. The parcel waits there for 7 days; after that it comes back to us and we refund the order.",
    { page: 2 },
  ),
  passage(
    "terms-missed-delivery",
    terms,
    ["1. Delivery", "1.6 When you are not home"],
    "If nobody is home, the carrier tries again the next working day or leaves the parcel at a nearby pick-up point. You will find a card or an e-mail saying where.",
    { page: 2 },
  ),
  passage(
    "terms-withdrawal",
    terms,
    ["2. Returns", "2.1 Right of withdrawal"],
    "You may return any item within 30 days of delivery without giving a reason. Items must be unused and in their original packaging.",
    { page: 3 },
  ),
  passage(
    "terms-return-how",
    terms,
    ["2. Returns", "2.2 How to return"],
    "Register the return in your account under Orders, print the free return label and take the parcel to any PostNL point. Returning is free of charge within the Netherlands and Belgium.",
    { page: 3 },
  ),
  passage(
    "terms-refund",
    terms,
    ["2. Returns", "2.3 Refunds"],
    "We refund the purchase price, including the original shipping costs, within 14 days after we receive the returned items, using the payment method you paid with.",
    { page: 3 },
  ),
  passage(
    "terms-exchange",
    terms,
    ["2. Returns", "2.4 Exchanges"],
    "We do not swap items directly. To exchange an item for another size or colour, return it for a refund and place a new order.",
    { page: 3 },
  ),
  passage(
    "terms-excluded",
    terms,
    ["2. Returns", "2.5 Items that cannot be returned"],
    "Personalised products, opened hygiene products such as earphones, and gift cards cannot be returned.",
    { page: 4 },
  ),
  passage(
    "terms-damaged",
    terms,
    ["3. Damaged or wrong items"],
    "If an item arrives damaged or is not what you ordered, contact customer service within 14 days with a photo. We send a replacement or refund the item, and you pay no shipping costs.",
    { page: 4 },
  ),
  passage(
    "terms-cancel",
    terms,
    ["4. Cancelling an order"],
    "You can cancel an order free of charge in your account until it has been dispatched. After dispatch, return it instead.",
    { page: 4 },
  ),
  // FAQ (Markdown: one passage per question)
  passage(
    "faq-payment-methods",
    faq,
    ["Which payment methods do you accept?"],
    "We accept iDEAL, Visa, Mastercard, American Express, PayPal, Bancontact and Klarna.",
  ),
  passage(
    "faq-pay-later",
    faq,
    ["Can I pay afterwards?"],
    "Yes, with Klarna you can pay within 30 days after delivery, at no extra cost.",
  ),
  passage(
    "faq-invoice",
    faq,
    ["Do I get an invoice?"],
    "You receive the invoice as a PDF by e-mail when your order is dispatched, and you can download it from your account at any time.",
  ),
  passage(
    "faq-vat",
    faq,
    ["Are prices including VAT?"],
    "All prices on the website include Dutch VAT. Business customers can enter their VAT number at checkout to receive a VAT invoice.",
  ),
  passage(
    "faq-account-needed",
    faq,
    ["Do I need an account to order?"],
    "No. You can order as a guest; an account lets you follow your orders and register returns more quickly.",
  ),
  passage(
    "faq-password",
    faq,
    ["I forgot my password"],
    "Choose Forgot password on the sign-in page and we will e-mail you a link to choose a new one. The link is valid for one hour.",
  ),
  passage(
    "faq-change-address",
    faq,
    ["Can I change my delivery address after ordering?"],
    "As long as the order has not been dispatched, customer service can change the address. Contact us as soon as possible with your order number.",
  ),
  passage(
    "faq-gift-cards",
    faq,
    ["Do you sell gift cards?"],
    "Yes, digital gift cards from 10 to 150 euro. They are valid for two years and can be used in the web shop and in our store.",
  ),
  passage(
    "faq-discount-code",
    faq,
    ["How do I use a discount code?"],
    "Enter the code in the Discount code field in your shopping cart before you pay. One code can be used per order.",
  ),
  passage(
    "faq-newsletter",
    faq,
    ["How do I unsubscribe from the newsletter?"],
    "Every newsletter has an unsubscribe link at the bottom, or you can switch it off under Account settings.",
  ),
  passage(
    "faq-stock",
    faq,
    ["A product is sold out. Will it come back?"],
    "Most products are restocked within a few weeks. Choose Notify me on the product page and we will e-mail you when it is available again.",
  ),
  passage(
    "faq-order-status",
    faq,
    ["Where can I see the status of my order?"],
    "Sign in and open Orders in your account: it shows for each order whether it is being prepared, dispatched or delivered.",
  ),
  passage(
    "faq-price-match",
    faq,
    ["Do you match lower prices from other shops?"],
    "We do not offer a price guarantee, but we regularly check our prices to stay competitive.",
  ),
  // Web pages (one passage per page section, with the page's URL)
  passage(
    "site-contact",
    site,
    ["Contact", "Customer service"],
    "Customer service is available Monday to Friday from 9:00 to 17:30 and on Saturday from 10:00 to 16:00. Reach us by chat, by e-mail at help@demo-shop.example or by phone on +31 20 123 4567.",
    { url: "https://demo-shop.example/contact" },
  ),
  passage(
    "site-store",
    site,
    ["Our store", "Visit us"],
    "Our store is at Keizersgracht 100 in Amsterdam, open Tuesday to Saturday from 10:00 to 18:00 and on Sunday from 12:00 to 17:00. You can pick up web orders there free of charge.",
    { url: "https://demo-shop.example/store" },
  ),
  passage(
    "site-about",
    site,
    ["About us"],
    "Demo Shop was founded in 2012 in Amsterdam and sells headphones, speakers and home electronics. Our team of 25 people tests every product before it goes into the range.",
    { url: "https://demo-shop.example/about" },
  ),
  passage(
    "site-sustainability",
    site,
    ["Sustainability", "Packaging"],
    "We ship in recycled cardboard without plastic fillers, and we offset the CO2 emissions of every delivery.",
    { url: "https://demo-shop.example/sustainability" },
  ),
  passage(
    "site-jobs",
    site,
    ["Working at Demo Shop"],
    "We are looking for a customer service colleague and a warehouse employee. Send your CV and a short letter to jobs@demo-shop.example.",
    { url: "https://demo-shop.example/jobs" },
  ),
  passage(
    "site-business",
    site,
    ["Business customers"],
    "Companies can order on account after approval, with payment within 30 days. Ask for a quote for orders of more than ten items.",
    { url: "https://demo-shop.example/business" },
  ),
  passage(
    "site-privacy",
    site,
    ["Privacy statement", "Your data"],
    "We use your personal data only to handle your order and, if you agree, to send the newsletter. We never sell your data. You can ask us to delete it at any time.",
    { url: "https://demo-shop.example/privacy" },
  ),
  // Product care and warranty guide
  passage(
    "care-warranty",
    care,
    ["Warranty", "Duration"],
    "All electronics carry a two-year warranty from the date of purchase. The warranty covers manufacturing defects, not damage from falls, water or wear.",
  ),
  passage(
    "care-warranty-claim",
    care,
    ["Warranty", "Making a claim"],
    "To make a warranty claim, register it in your account with the order number and a description of the defect. We repair or replace the product, or refund it if that is not possible.",
  ),
  passage(
    "care-headphones",
    care,
    ["Care", "Headphones"],
    "Clean ear cushions with a slightly damp cloth and never use alcohol. Store headphones in their case and do not fold the cable sharply.",
  ),
  passage(
    "care-battery",
    care,
    ["Care", "Batteries"],
    "For a long battery life, charge devices before the battery is completely empty and do not leave them in the sun. Batteries are covered by the warranty for one year.",
  ),
  passage(
    "care-repair",
    care,
    ["Repairs outside warranty"],
    "After the warranty we can still repair most products. We send you a price estimate first; the estimate is free.",
  ),
];

export interface RetrievalQuestion {
  question: string;
  /** The passages that answer it; any of them in the top 5 counts. */
  expected: string[];
  /** Worded unlike the passage (synonyms, another angle), not its own terms. */
  paraphrase: boolean;
}

const q = (question: string, expected: string | string[], paraphrase = true): RetrievalQuestion => ({
  question,
  expected: Array.isArray(expected) ? expected : [expected],
  paraphrase,
});

export const retrievalSet: RetrievalQuestion[] = [
  q("How long does delivery take?", "terms-delivery-times", false),
  q("When will my package arrive?", "terms-delivery-times"),
  q("If I order today, when do I get it?", "terms-delivery-times"),
  q("How many days until my parcel is at my door in Germany?", "terms-delivery-times"),
  q("How much does shipping cost?", "terms-shipping-costs", false),
  q("Is delivery free?", "terms-shipping-costs"),
  q("What do you charge to send an order to France?", "terms-shipping-costs"),
  q("Minimum order for free postage?", "terms-shipping-costs"),
  q("Which carrier do you use?", "terms-carriers", false),
  q("Can I track my parcel?", "terms-carriers"),
  q("Where is my package right now?", ["terms-carriers", "faq-order-status"]),
  q("Do you deliver to the UK?", "terms-non-eu"),
  q("Can you send my order to Switzerland?", "terms-non-eu"),
  q("Can I collect my parcel at a pick-up point?", "terms-pickup-points", false),
  q("I don't want home delivery, is there another option?", ["terms-pickup-points", "site-store"]),
  q("What happens if I'm not at home when the courier comes?", "terms-missed-delivery"),
  q("Can I return a product?", "terms-withdrawal", false),
  q("What is your return policy?", ["terms-withdrawal", "terms-return-how"]),
  q("I changed my mind about my purchase, can I send it back?", ["terms-withdrawal", "terms-return-how"]),
  q("How many days do I have to return something?", "terms-withdrawal"),
  q("How do I send an item back?", "terms-return-how"),
  q("Do I have to pay for return shipping?", "terms-return-how"),
  q("Where do I get a return label?", "terms-return-how"),
  q("When will I get my money back?", "terms-refund"),
  q("How long does a refund take?", "terms-refund", false),
  q("Will you reimburse the delivery fee too?", "terms-refund"),
  q("Can I exchange a product for a different size?", "terms-exchange", false),
  q("Can I swap the colour of my headphones?", "terms-exchange"),
  q("Can I return a gift card?", "terms-excluded", false),
  q("Can I give back earphones I already used?", "terms-excluded"),
  q("My order arrived broken, what now?", "terms-damaged"),
  q("You sent me the wrong item", "terms-damaged"),
  q("How do I cancel my order?", "terms-cancel", false),
  q("I ordered by mistake, can I stop the order?", "terms-cancel"),
  q("Which payment methods do you accept?", "faq-payment-methods", false),
  q("Can I pay with my credit card?", "faq-payment-methods"),
  q("Do you take Bancontact?", "faq-payment-methods"),
  q("Can I buy now and pay later?", "faq-pay-later"),
  q("Where do I find my invoice?", "faq-invoice", false),
  q("I need a receipt for my purchase", "faq-invoice"),
  q("Are your prices with or without tax?", "faq-vat"),
  q("Can I order without creating an account?", "faq-account-needed"),
  q("I can't log in, I lost my password", "faq-password"),
  q("Can I change the address my order goes to?", "faq-change-address"),
  q("Do you sell gift vouchers?", "faq-gift-cards"),
  q("How long is a gift card valid?", "faq-gift-cards"),
  q("Where do I enter my promo code?", "faq-discount-code"),
  q("How do I stop getting your emails?", "faq-newsletter"),
  q("When will the sold out speaker be back in stock?", "faq-stock"),
  q("What is the status of my order?", "faq-order-status", false),
  q("Do you price match?", "faq-price-match"),
  q("What are your opening hours?", ["site-contact", "site-store"]),
  q("How can I reach customer service?", "site-contact", false),
  q("What is your phone number?", "site-contact"),
  q("Do you have a physical shop I can visit?", "site-store"),
  q("Where is your store located?", "site-store"),
  q("Are you open on Sundays?", "site-store"),
  q("Who are you, what kind of company is this?", "site-about"),
  q("Is your packaging environmentally friendly?", "site-sustainability"),
  q("Are you hiring?", "site-jobs"),
  q("Can my company buy on invoice?", "site-business"),
  q("What do you do with my personal information?", "site-privacy"),
  q("How long is the warranty?", "care-warranty", false),
  q("Is water damage covered by the guarantee?", "care-warranty"),
  q("My headphones stopped working after a year, what can I do?", ["care-warranty-claim", "care-warranty"]),
  q("How do I clean my headphones?", "care-headphones"),
  q("How do I make my battery last longer?", "care-battery"),
  q("Can you fix my speaker after the warranty has ended?", "care-repair"),
];
