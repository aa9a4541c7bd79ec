//! Typical temperatures for a city: the weather tool of the external-tools design, in Rust.
//!
//! The data are monthly climate normals (mean daily maximum, °C) built into the crate,
//! so the tool answers without a network; a real deployment would call a forecast API
//! in the same place.

use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    engine = ">=0.1, <2",
    display_name = { "en-US": "Weather", "it-IT": "Meteo" },
    description = "Typical temperatures for major cities.",
    // What an image carrying this plugin installs and sets (`engine image requirements`).
    system = { debian = ["ca-certificates", "tzdata"], env = { WEATHER_UNITS = "metric" } },
}

/// The arguments of `weather`.
#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
pub struct WeatherQuery {
    /// The city, in English, such as `Rome` or `Tokyo`.
    pub city: String,
    /// How many days ahead, 1 to 14.
    pub days: u8,
    /// `celsius` or `fahrenheit`; null for celsius.
    pub units: Option<String>,
}

/// Typical daytime temperatures.
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct Forecast {
    pub city: String,
    /// One temperature per day, in the requested units.
    pub temps: Vec<f32>,
}

/// Mean daily maximum per month, January first, in °C.
const NORMALS: &[(&str, [f32; 12])] = &[
    (
        "London",
        [
            8.1, 8.7, 11.6, 14.8, 18.1, 21.2, 23.5, 23.0, 20.0, 15.6, 11.3, 8.6,
        ],
    ),
    (
        "New York",
        [
            3.9, 5.3, 9.8, 16.2, 21.6, 26.3, 29.4, 28.5, 24.8, 18.4, 12.3, 6.8,
        ],
    ),
    (
        "Paris",
        [
            7.6, 8.8, 12.8, 16.1, 19.9, 23.1, 25.5, 25.3, 21.2, 16.4, 11.0, 8.0,
        ],
    ),
    (
        "Rome",
        [
            12.6, 13.7, 16.3, 19.1, 23.6, 27.6, 30.7, 31.0, 27.1, 22.3, 17.0, 13.6,
        ],
    ),
    (
        "Sydney",
        [
            25.9, 25.8, 24.7, 22.4, 19.6, 17.3, 16.7, 17.9, 20.2, 22.2, 23.6, 25.2,
        ],
    ),
    (
        "Tokyo",
        [
            9.8, 10.9, 14.2, 19.4, 23.6, 26.1, 29.9, 31.3, 27.5, 22.0, 16.7, 12.0,
        ],
    ),
];

/// Get the typical daytime temperature in a city for each of the next days, from
/// monthly climate normals. Unknown cities are an error that lists the known ones.
#[define_tool(
    summary = { "en-US": "Typical temperatures for a city.", "it-IT": "Temperature tipiche di una città." },
    category = "web",
    read_only,
    idempotent,
    example = r#"{ "city": "Rome", "days": 3, "units": null }"#,
    example = r#"{ "city": "Tokyo", "days": 1, "units": "fahrenheit" }"#,
)]
pub async fn weather(query: WeatherQuery) -> Result<Forecast, ToolError> {
    forecast(&query, current_month())
}

/// The forecast for `query` starting in `month` (0 = January).
pub fn forecast(query: &WeatherQuery, month: usize) -> Result<Forecast, ToolError> {
    let Some((city, normals)) = NORMALS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(query.city.trim()))
    else {
        let known: Vec<&str> = NORMALS.iter().map(|(name, _)| *name).collect();
        return Err(ToolError::invalid_arguments(format!(
            "unknown city `{}`; known cities: {}",
            query.city,
            known.join(", ")
        )));
    };
    if !(1..=14).contains(&query.days) {
        return Err(ToolError::invalid_arguments(format!(
            "`days` must be 1 to 14, not {}",
            query.days
        )));
    }
    let convert: fn(f32) -> f32 = match query.units.as_deref() {
        None | Some("celsius") => |c| c,
        Some("fahrenheit") => |c| c * 9.0 / 5.0 + 32.0,
        Some(other) => {
            return Err(ToolError::invalid_arguments(format!(
                "`units` must be `celsius`, `fahrenheit` or null, not `{other}`"
            )))
        }
    };
    let temp = convert(normals[month % 12]);
    Ok(Forecast {
        city: (*city).to_owned(),
        temps: vec![temp; usize::from(query.days)],
    })
}

fn current_month() -> usize {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs() / 86_400);
    // Month of the year from days since 1970 (civil calendar, Howard Hinnant's method).
    let era_day = (days + 719_468) % 146_097;
    let year_of_era = (era_day - era_day / 1_460 + era_day / 36_524 - era_day / 146_096) / 365;
    let day_of_year = era_day - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    ((shifted_month + 2) % 12) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(city: &str, days: u8, units: Option<&str>) -> WeatherQuery {
        WeatherQuery {
            city: city.into(),
            days,
            units: units.map(Into::into),
        }
    }

    #[test]
    fn forecast_repeats_the_months_normal_in_the_requested_units() {
        let july = forecast(&query("rome", 3, None), 6).unwrap();
        assert_eq!(
            july,
            Forecast {
                city: "Rome".into(),
                temps: vec![30.7; 3]
            }
        );
        let fahrenheit = forecast(&query("Rome", 1, Some("fahrenheit")), 6).unwrap();
        assert!((fahrenheit.temps[0] - 87.26).abs() < 0.01, "{fahrenheit:?}");
    }

    #[test]
    fn forecast_rejects_unknown_cities_days_and_units() {
        let unknown = forecast(&query("Atlantis", 1, None), 0).unwrap_err();
        assert!(
            unknown.message().contains("known cities: London"),
            "{unknown}"
        );
        assert!(forecast(&query("Rome", 0, None), 0)
            .unwrap_err()
            .message()
            .contains("1 to 14"));
        assert!(forecast(&query("Rome", 1, Some("kelvin")), 0)
            .unwrap_err()
            .message()
            .contains("kelvin"));
    }

    #[test]
    fn current_month_is_a_month() {
        assert!(current_month() < 12);
    }
}
