"""Cases and data: sampling, Eclipse decks, the input encoding, data-set packs, Flow batches."""
