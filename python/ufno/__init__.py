"""ufno: the Python side of the project (PyTorch networks, data, training, KPI heads, conversion).

Run from the repository's python/ folder, or with it on PYTHONPATH (no install step):

    PYTHONPATH=python python3 -m ufno.<task> [options]

Tasks (each `python3 -m ufno.TASK --help`): train, convert, export_checkpoint, make_fixtures,
grow_modes, average_models, accuracy_report, cases, pack, run_flow_batch, near_cases, and the
KPI heads' trainers max_dp_head, plume_radius_head, co2_mass_head, dp_envelope_head,
dp_field_scale_head. The code sits in the subpackages: models (the networks), data (cases, decks,
encodings, packs, Flow batches), training, heads and conversion (model files)."""
