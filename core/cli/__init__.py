"""The command lines, one module per command (profile, run, generate, tune, compare, zoo, localize,
bundle), their shared arguments, output and prologue. The top layer of core: may import all of it,
never gui."""
