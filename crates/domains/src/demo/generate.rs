//! The generator's material: its random numbers (SplitMix64: a seed gives the same numbers forever), the
//! names, places, products, carriers, expense categories, projects and tasks the rows are drawn from, date
//! helpers, and [`DemoConfig`]. The same seed, scale and day give the same rows (see `rows`).

use chrono::{Days, Duration, NaiveDate, NaiveDateTime, NaiveTime};

/// The order the source material asks about: in transit, with an ETA.
pub const IN_TRANSIT_ORDER: &str = "QZKDLWPRTM";

/// SplitMix64: small, fast, and stable forever (a dependency's generator could change between versions).
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// A float in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub(crate) const FIRST: &[&str] = &[
    "Ada",
    "Alan",
    "Grace",
    "Linus",
    "Margaret",
    "Ken",
    "Barbara",
    "Dennis",
    "Frances",
    "Edsger",
    "Radia",
    "Tim",
    "Hedy",
    "John",
    "Katherine",
    "Donald",
    "Anita",
    "Niklaus",
    "Sophie",
    "Guido",
    "Shafi",
    "Leslie",
    "Carol",
    "Bjarne",
    "Annie",
    "Yukihiro",
    "Lynn",
    "James",
    "Mary",
    "Ivan",
];
pub(crate) const LAST: &[&str] = &[
    "Lovelace",
    "Turing",
    "Hopper",
    "Torvalds",
    "Hamilton",
    "Thompson",
    "Liskov",
    "Ritchie",
    "Allen",
    "Dijkstra",
    "Perlman",
    "Berners-Lee",
    "Lamarr",
    "Backus",
    "Johnson",
    "Knuth",
    "Borg",
    "Wirth",
    "Wilson",
    "van Rossum",
    "Goldwasser",
    "Lamport",
    "Shaw",
    "Stroustrup",
    "Easley",
    "Matsumoto",
    "Conway",
    "Gosling",
    "Keller",
    "Sutherland",
];
pub(crate) const PLACES: &[(&str, &str)] = &[
    ("London", "United Kingdom"),
    ("Manchester", "United Kingdom"),
    ("Berlin", "Germany"),
    ("Munich", "Germany"),
    ("Paris", "France"),
    ("Lyon", "France"),
    ("Amsterdam", "Netherlands"),
    ("Madrid", "Spain"),
    ("Lisbon", "Portugal"),
    ("Milan", "Italy"),
    ("Vienna", "Austria"),
    ("Zurich", "Switzerland"),
    ("Stockholm", "Sweden"),
    ("Oslo", "Norway"),
    ("Copenhagen", "Denmark"),
    ("Dublin", "Ireland"),
    ("New York", "United States"),
    ("Seattle", "United States"),
    ("Toronto", "Canada"),
    ("Melbourne", "Australia"),
];

/// (sku prefix or category, extra, names or descriptions, range in cents)
pub(crate) type Line<T> = (&'static str, T, &'static [&'static str], (u64, u64));

/// (sku prefix, category, names, price range in cents)
pub(crate) const PRODUCT_LINES: &[Line<&str>] = &[
    (
        "BEAN",
        "Coffee beans",
        &[
            "Ethiopia Yirgacheffe 250g",
            "Colombia Huila 250g",
            "Kenya AA 250g",
            "Brazil Santos 1kg",
            "Guatemala Antigua 250g",
            "House Espresso Blend 1kg",
            "Decaf Swiss Water 250g",
            "Sumatra Mandheling 250g",
        ],
        (900, 3200),
    ),
    (
        "GRND",
        "Grinders",
        &[
            "Hand grinder",
            "Burr grinder",
            "Flat burr grinder",
            "Travel grinder",
        ],
        (3500, 39900),
    ),
    (
        "BREW",
        "Brewers",
        &[
            "Pour-over dripper",
            "French press 1l",
            "AeroPress",
            "Moka pot 6 cups",
            "Cold brew jar",
            "Chemex 6 cups",
        ],
        (1900, 6900),
    ),
    (
        "MACH",
        "Espresso machines",
        &[
            "Espresso machine",
            "Dual boiler espresso machine",
            "Lever espresso machine",
            "Capsule machine",
        ],
        (14900, 189900),
    ),
    (
        "KETL",
        "Kettles",
        &[
            "Gooseneck kettle",
            "Electric gooseneck kettle",
            "Stovetop kettle",
        ],
        (2900, 12900),
    ),
    (
        "CUP",
        "Cups and mugs",
        &[
            "Ceramic mug",
            "Double-walled glass",
            "Travel mug",
            "Espresso cups (set of 2)",
            "Latte bowl",
        ],
        (800, 3900),
    ),
    (
        "ACC",
        "Accessories",
        &[
            "Paper filters (100)",
            "Scale with timer",
            "Milk jug",
            "Tamper",
            "Knock box",
            "Cleaning tablets",
            "Descaler",
        ],
        (500, 5900),
    ),
];

pub(crate) const CARRIERS: &[&str] = &["DHL", "UPS", "DPD", "Royal Mail", "FedEx", "PostNL"];
pub(crate) const HUBS: &[&str] = &[
    "Leipzig hub",
    "Cologne sorting centre",
    "East Midlands hub",
    "Paris-Roissy hub",
    "Amsterdam Schiphol hub",
    "Liège hub",
    "Madrid distribution centre",
    "Milan Malpensa hub",
    "out for delivery",
];

/// (category, default tax rate in basis points (1900 is 19 %), descriptions, net range in cents)
pub(crate) const EXPENSE_CATEGORIES: &[Line<u64>] = &[
    (
        "Coffee",
        700,
        &[
            "Coffee",
            "Flat white",
            "Espresso",
            "Cappuccino",
            "Coffee with the team",
            "Coffee beans for the office",
        ],
        (250, 1800),
    ),
    (
        "Meals",
        700,
        &[
            "Lunch",
            "Team lunch",
            "Dinner with a client",
            "Sandwiches for the workshop",
        ],
        (900, 12000),
    ),
    (
        "Travel",
        1900,
        &[
            "Train ticket",
            "Taxi",
            "Flight",
            "Hotel night",
            "Car rental",
            "Parking",
        ],
        (800, 45000),
    ),
    (
        "Office supplies",
        1900,
        &[
            "Printer paper",
            "Notebooks",
            "Pens",
            "Desk lamp",
            "Whiteboard markers",
        ],
        (300, 9000),
    ),
    (
        "Software",
        1900,
        &[
            "Design tool subscription",
            "Cloud hosting",
            "Domain renewal",
            "Accounting software",
            "Video calls subscription",
        ],
        (500, 30000),
    ),
    (
        "Hardware",
        1900,
        &[
            "Laptop stand",
            "Monitor",
            "Keyboard",
            "Headset",
            "USB-C hub",
        ],
        (2000, 120000),
    ),
    ("Rent", 0, &["Office rent"], (120000, 180000)),
    (
        "Utilities",
        1900,
        &["Electricity", "Internet", "Phone plan"],
        (3000, 25000),
    ),
    (
        "Marketing",
        1900,
        &[
            "Ads",
            "Conference booth",
            "Printed flyers",
            "Newsletter tool",
        ],
        (2000, 80000),
    ),
    ("Other", 1900, &["Miscellaneous"], (100, 5000)),
];

pub(crate) const PROJECTS: &[(&str, &str)] = &[
    ("Work", "Everything for the job."),
    ("Home", "The flat, repairs and the household."),
    ("Health", "Appointments, sport and check-ups."),
    ("Finances", "Taxes, insurance and bills."),
];

/// (title, project index or None for the inbox, done)
pub(crate) const TASKS: &[(&str, Option<usize>, bool)] = &[
    ("Buy a birthday present for Mum", None, false),
    ("Book a table for Mum's birthday dinner", None, false),
    ("Register a domain for my personal website", None, false),
    ("Write the About page for my personal website", None, false),
    ("Fix the leaking kitchen tap", None, false),
    ("Renew the car insurance", None, false),
    ("Schedule a dentist appointment", None, false),
    ("Reply to the landlord about the heating", None, false),
    ("Prepare the quarterly VAT return", Some(3), false),
    ("Send invoices for October", Some(0), true),
    ("Review the pull request from Grace", Some(0), false),
    ("Prepare slides for Monday's meeting", Some(0), false),
    ("Update the project roadmap", Some(0), false),
    ("Book flights for the Berlin conference", Some(0), true),
    ("Clean the gutters", Some(1), false),
    ("Replace the hallway light bulb", Some(1), true),
    ("Order new curtains", Some(1), false),
    ("Declutter the garage", Some(1), false),
    ("Go for a run three times this week", Some(2), false),
    ("Book the annual check-up", Some(2), true),
    ("Buy running shoes", Some(2), true),
    ("Pay the electricity bill", Some(3), true),
    ("Compare mortgage offers", Some(3), false),
    ("File last year's receipts", Some(3), false),
    ("Cancel the unused streaming subscription", Some(3), true),
    ("Plan the team offsite", Some(0), false),
    (
        "Water the plants while the neighbours are away",
        Some(1),
        false,
    ),
    ("Renew the gym membership", Some(2), false),
    ("Set up automatic savings transfer", Some(3), false),
    ("Archive old project documents", Some(0), true),
];

/// What the generator makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemoConfig {
    /// The random seed.
    pub seed: u64,
    /// Multiplies orders (1,000 per unit), customers and order items.
    pub scale: u64,
    /// "Today": dates are spread over the 18 months before it.
    pub today: NaiveDate,
}

impl DemoConfig {
    /// The number of orders.
    pub fn orders(&self) -> u64 {
        self.scale.max(1).saturating_mul(1000)
    }

    /// The number of customers.
    pub fn customers(&self) -> u64 {
        self.scale.max(1).saturating_mul(250)
    }

    /// The number of expenses.
    pub const EXPENSES: u64 = 2000;
}

/// A day in the 18 months before `today` (548 days).
pub(crate) fn day_before(rng: &mut Rng, today: NaiveDate) -> NaiveDate {
    today
        .checked_sub_days(Days::new(rng.below(548)))
        .unwrap_or(today)
}

pub(crate) fn at_time(day: NaiveDate, rng: &mut Rng) -> NaiveDateTime {
    let seconds = 8 * 3600 + rng.below(12 * 3600);
    day.and_time(NaiveTime::MIN) + Duration::seconds(seconds as i64)
}

/// A 10-letter upper-case order code.
pub(crate) fn order_code(rng: &mut Rng) -> String {
    (0..10)
        .map(|_| char::from(b'A' + rng.below(26) as u8))
        .collect()
}
