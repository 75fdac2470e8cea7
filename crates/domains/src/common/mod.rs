//! Tools every agent may use: the date, a calculator, and `final_answer`.

mod calculator;
mod date;

pub use calculator::{CalculatorArgs, calculator, evaluate, format_number};
pub use date::{Clock, NoArguments, current_date};
pub use steward_core::final_answer;
