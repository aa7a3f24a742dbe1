#!/usr/bin/env python3
"""The README's command list (the ```sh block of "The `tessera` command") against the binary's
own help: the same commands as `tessera --help` lists, and for each command exactly the options
and subcommands (pack's) its `tessera CMD --help` names (--help itself aside). Options named only
in a help's prose (`tessera tune --log` in pack's, each of tune and agent naming the
other's) are listed in PROSE_ONLY.
Usage: readme_commands_test.py TESSERA_BIN README.md
"""
import re
import subprocess
import sys

OPTION = re.compile(r"--[a-z][a-z0-9-]*")
PROSE_ONLY = {"pack": {"--log"}, "agent": {"--farm"}, "tune": {"--broker"}}


def readme_commands(path):
    text = open(path, encoding="utf-8").read()
    section = text.split("## The `tessera` command", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands, current = {}, None
    for line in block.splitlines():
        m = re.match(r"tessera (\w+)", line)
        if m:
            current = m.group(1)
            # Subcommands (`tessera pack inspect|validate FILE...`) count as words of the command.
            sub = re.match(r"tessera \w+ ([a-z|]+)( |$)", line)
            if sub:
                commands.setdefault(current, set()).update(sub.group(1).split("|"))
        if current:
            commands.setdefault(current, set()).update(OPTION.findall(line.split("#", 1)[0]))
    return commands


def main():
    tessera, readme = sys.argv[1], sys.argv[2]
    listed = subprocess.run([tessera, "--help"], capture_output=True, text=True,
                            check=True).stdout
    commands = set(re.findall(r"^  ([a-z]+)  ", listed, re.M))
    documented = readme_commands(readme)
    failures = []
    if not commands or commands != set(documented):
        failures.append(f"commands: `tessera --help` {sorted(commands)}, README "
                        f"{sorted(documented)}")
    for command in sorted(commands & set(documented)):
        text = subprocess.run([tessera, command, "--help"], capture_output=True, text=True,
                              check=True).stdout
        options = set(OPTION.findall(text)) - {"--help"} - PROSE_ONLY.get(command, set())
        options |= set(re.findall(rf"^\s*(?:usage: )?tessera {command} ([a-z]+) ", text, re.M))
        if options - documented[command]:
            failures.append(f"{command}: the README lacks {sorted(options - documented[command])}")
        if documented[command] - options:
            failures.append(f"{command}: the README has {sorted(documented[command] - options)}, "
                            f"which `tessera {command} --help` does not name")
    for f in failures:
        print("readme:", f)
    compared = sum(len(o) for o in documented.values())
    print(f"readme: {len(commands)} commands, {compared} options and subcommands compared, "
          f"{len(failures)} problems")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
