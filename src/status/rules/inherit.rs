//! What a provider takes from other rule files: the layer's rules every provider inherits
//! ([`Provider::inherit`]), and a fork's screens read with the rules of the CLI it forks
//! ([`Provider::fork_of`]).

use super::{Condition, Provider};
use crate::status::view::Region;

impl Provider {
    /// This provider with the rules of `layer` added, as its `[layer]` table says: skipped
    /// rules and rules the provider defines itself (same id) left out, the provider's pointer
    /// glyphs and exclusions applied. A provider's own rule wins a tie of priority.
    pub fn inherit(&self, layer: &Provider) -> Provider {
        let mut provider = self.clone();
        if !self.layer_use.enabled || self.is_layer {
            return provider;
        }
        for rule in &layer.rules {
            let id = &*rule.id;
            if self.layer_use.skip.iter().any(|skip| skip == id)
                || self.rules.iter().any(|own| &*own.id == id)
            {
                continue;
            }
            let mut rule = rule.clone();
            rule.layer = Some(layer.id.clone());
            for condition in &mut rule.conditions {
                if let (Some(menu), Some(pointers)) =
                    (&mut condition.menu, &self.layer_use.pointers)
                {
                    menu.pointers = pointers.clone();
                }
            }
            if !self.layer_use.not.is_empty() {
                rule.conditions.push(Condition {
                    region: Region::Whole,
                    lines: None,
                    contains: Vec::new(),
                    any: Vec::new(),
                    regex: Vec::new(),
                    not: self.layer_use.not.clone(),
                    not_regex: Vec::new(),
                    menu: None,
                });
            }
            provider.rules.push(rule);
        }
        provider
            .rules
            .sort_by_key(|r| std::cmp::Reverse(r.priority));
        provider
    }

    /// This provider (a fork: `extends = "BASE"`) reading its screens as `base` does: `base`'s
    /// rule row, last-answer rule, delivery, signals, layer use and rules, under this file's
    /// id, name, detection, launch, close and hook configuration. The rules keep `base`'s ids,
    /// so `explain` names the rule that decided.
    pub fn fork_of(&self, base: &Provider) -> Provider {
        Provider {
            rule_line: base.rule_line.clone(),
            last_response: base.last_response.clone(),
            delivery: base.delivery.clone(),
            signals: base.signals.clone(),
            layer_use: base.layer_use.clone(),
            rules: base.rules.clone(),
            ..self.clone()
        }
    }
}
