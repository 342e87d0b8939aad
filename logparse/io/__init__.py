"""Input: the only layer that touches files — sources, decoding, repairs, wrapper prefixes."""
