//! Tools every agent may use: the date, a calculator, and `final_answer`.

mod calculator;
mod date;
mod dates;

pub use calculator::{CalculatorArgs, calculator, evaluate, format_number};
pub use date::{Clock, NoArguments, current_date};
pub use dates::{DATE_FORMATS, parse_day};
pub use steward_core::final_answer;
