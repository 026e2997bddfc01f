use mcp_runtime::prelude::*;

#[tool(
    name = "a_tool_name_that_goes_on_and_on_well_past_the_limit_of_one_hundred_and_twenty_eight_characters_that_the_specification_sets_for_names"
)]
fn get_weather(city: String) -> String {
    city
}

fn main() {}
