//! A remote node's answer to `type_description_interfaces/srv/GetTypeDescription`, as the
//! recorder asks the publishers of a type it has no definition for: the CDR response (fields,
//! referenced types, `.msg` sources), decoded and turned into the definition it records. The
//! first byte picks the hash the answer is checked against: none (half the inputs), a malformed
//! one or one of another type. What gives a definition must give the same one when its
//! hash is announced, and its text must parse to a description of that hash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_codec::type_hash::TypeDescription;
use rosbag2_rs_interfaces::from_cdr;
use rosbag2_rs_interfaces::type_description_interfaces::srv::GetTypeDescriptionResponse;
use rosbag2_rs_middleware::type_description::definition_from_answer;

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let Ok(answer) = from_cdr::<GetTypeDescriptionResponse>(bytes) else {
        return;
    };
    let hash = match pick % 4 {
        2 => Some("RIHS01_not_a_hash"),
        3 => Some("RIHS01_0000000000000000000000000000000000000000000000000000000000000000"),
        _ => None,
    };
    let Ok(definition) = definition_from_answer(&answer, hash) else {
        return;
    };
    let again = definition_from_answer(&answer, Some(&definition.type_description_hash))
        .expect("an answer's definition is accepted under its own hash");
    assert_eq!(again, definition);
    let parsed = TypeDescription::from_definition(&definition.topic_type, &definition)
        .expect("a recorded definition parses");
    assert_eq!(parsed.rihs01(), definition.type_description_hash);
    parsed
        .definition(&|_| None, Some(&definition.type_description_hash))
        .expect("the parsed description spells a definition of the same hash");
});
