"""2-layer LSTM over variable-length sequences (dynamic shapes; needs allow_rnn=True to compile).

What torch 2.14 really does with it: by default dynamo does not trace nn.LSTM ("Attempted to wrap
RNN, GRU, or LSTM", GB0014), so the frame is skipped and runs eagerly: "compiling" it changes
nothing, and the profile says so. With the dynamo config allow_rnn=True it compiles:

    python3 main.py profile resources/models/lstm_variable_length.py --backend eager \\
        --dynamo-config allow_rnn=True --sweep-shapes --dynamic false --dynamic auto --dynamic true --out out/lstm

Over the 11 sequence lengths below, dynamic=false compiles once per new length until the
recompile limit (8), then runs new lengths eagerly; auto compiles twice and then marks the
length dynamic; true compiles once.
"""

import torch

INPUT_SIZE, HIDDEN_SIZE, BATCH = 128, 256, 4
SEQUENCE_LENGTHS = [8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512]


def get_model():
    torch.manual_seed(0)
    return torch.nn.LSTM(input_size=INPUT_SIZE, hidden_size=HIDDEN_SIZE, num_layers=2)


def _sequence(length: int) -> tuple:
    return (torch.randn(length, BATCH, INPUT_SIZE),)  # (seq_len, batch, features)


def get_example_inputs():
    return _sequence(64)


def get_input_variants():
    return [_sequence(n) for n in SEQUENCE_LENGTHS]
