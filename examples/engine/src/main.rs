//! An engine image: the plugins it links are the plugins it has.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use engine_core::Registry;

// Linking is installing: name each plugin crate once so the linker keeps it.
use acme_crm as _;
use weather as _;

#[derive(Parser)]
#[command(about = "An example engine built from engine-core and the example plugins")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the linked plugins and their tools, with summaries for people.
    Tools {
        /// The reader's locale (BCP 47), for display names and summaries.
        #[arg(long, default_value = "en-US")]
        locale: String,
    },
}

fn main() -> ExitCode {
    let registry = Registry::linked();
    match Cli::parse().command {
        Command::Tools { locale } => print!("{}", list_tools(&registry, &locale)),
    }
    ExitCode::SUCCESS
}

fn list_tools(registry: &Registry, locale: &str) -> String {
    let mut out = String::new();
    for entry in registry.plugins() {
        let plugin = entry.plugin;
        let name = plugin
            .display_name
            .map_or(plugin.namespace, |text| text.resolve(locale));
        out += &format!(
            "{name} ({} {}, engine {})\n",
            plugin.package, plugin.version, plugin.engine
        );
        if let Some(description) = plugin.description {
            out += &format!("  {}\n", description.resolve(locale));
        }
        for tool in &entry.tools {
            let category = tool.category.unwrap_or("-");
            out += &format!(
                "  {:<28} [{category}] {}\n",
                tool.id(),
                tool.summary_for(locale)
            );
        }
    }
    out
}
