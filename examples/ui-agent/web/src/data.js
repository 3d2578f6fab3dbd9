// Content of the demo page. The phones and the essay are the grounds for
// the pointing and deixis scenarios of ui-agent.md §7; the offline demo
// brain finds everything through the accessibility snapshot, never
// through this file.

export const phones = [
  { name: "Galaxy S25", brand: "Samsung", screen: "6.2″", price: 799, hue: 210 },
  { name: "Pixel 10", brand: "Google", screen: "6.3″", price: 799, hue: 150 },
  { name: "iPhone 17 Pro", brand: "Apple", screen: "6.3″", price: 1099, hue: 25 },
  { name: "OnePlus 13", brand: "OnePlus", screen: "6.8″", price: 899, hue: 0 },
  { name: "Xperia 1 VII", brand: "Sony", screen: "6.5″", price: 1399, hue: 260 },
  { name: "Galaxy Z Flip 7", brand: "Samsung", screen: "6.9″", price: 1099, hue: 190 },
  { name: "Pixel 9a", brand: "Google", screen: "6.3″", price: 499, hue: 120 },
  { name: "Moto Edge 2025", brand: "Motorola", screen: "6.7″", price: 549, hue: 320 },
  { name: "Nothing Phone 3", brand: "Nothing", screen: "6.7″", price: 799, hue: 45 },
  { name: "Find X8 Pro", brand: "OPPO", screen: "6.8″", price: 1149, hue: 170 },
  { name: "Zenfone 12 Ultra", brand: "ASUS", screen: "6.8″", price: 899, hue: 280 },
  { name: "Galaxy A56", brand: "Samsung", screen: "6.7″", price: 449, hue: 230 },
  { name: "Pixel 10 Pro", brand: "Google", screen: "6.3″", price: 999, hue: 135 },
  { name: "iPhone 17", brand: "Apple", screen: "6.3″", price: 799, hue: 340 },
  { name: "Xiaomi 15", brand: "Xiaomi", screen: "6.4″", price: 999, hue: 15 },
  { name: "iPhone 16e", brand: "Apple", screen: "6.1″", price: 599, hue: 300 },
];

export const article = {
  title: "The octopus: a mind spread through eight arms",
  byline: "An essay on animal cognition · 4 minute read",
  sections: [
    {
      heading: "A brain in every arm",
      text:
        "An octopus has about 500 million neurons, and roughly two thirds of them sit in its arms rather than its head. " +
        "Each arm can taste, touch and make small decisions on its own: a severed arm still reaches for food and passes it " +
        "toward where the mouth would be. The central brain sets goals, and the arms work out the details.",
    },
    {
      heading: "Solving problems",
      text:
        "In the lab, octopuses unscrew jar lids to reach crabs, find their way through simple mazes and remember the answer " +
        "days later. Some learn a task just by watching another octopus do it first. Keepers tell of animals that flood their " +
        "tanks, short out lights with a jet of water and slip through gaps no wider than their beak.",
    },
    {
      heading: "Masters of disguise",
      text:
        "Camouflage is where the octopus is most astonishing. Thousands of colour cells in the skin, called chromatophores, " +
        "open and close in a fraction of a second, and muscles raise bumps that copy the texture of rock or coral. " +
        "Strangely, the animal is colour-blind, and researchers still argue about how it matches colours it cannot see.",
    },
    {
      heading: "Play and curiosity",
      text:
        "Octopuses that are fed and safe still explore. Given a floating bottle, some push it into the current of the inflow " +
        "again and again, catching it as it drifts back, which looks very much like play. Curiosity of this kind is rare " +
        "outside mammals and birds.",
    },
    {
      heading: "A short life",
      text:
        "For all this intelligence, most octopuses live only one or two years. They have no parents to learn from and no " +
        "group to teach, so every skill is worked out from scratch. A female guards her eggs until they hatch and then dies, " +
        "which makes the octopus mind a bright, brief experiment repeated each generation.",
    },
    {
      heading: "What octopuses teach us",
      text:
        "Our last common ancestor with the octopus was a worm-like creature more than 500 million years ago. Intelligence " +
        "therefore evolved at least twice, along very different paths, and a mind does not need a backbone, a long life or " +
        "a single central brain. That is a useful thought for anyone building minds out of software.",
    },
  ],
};

export const form = {
  role: "Developer Advocate",
  fields: [
    { id: "first-name", label: "First name", autoComplete: "given-name", required: true },
    { id: "last-name", label: "Last name", autoComplete: "family-name", required: true },
    { id: "email", label: "Email", type: "email", autoComplete: "email", required: true },
    { id: "phone", label: "Phone", type: "tel", autoComplete: "tel" },
    { id: "years", label: "Years of experience", type: "number", min: 0, max: 60 },
    { id: "why", label: "Why are you interested in this role?", multiline: true },
  ],
};
