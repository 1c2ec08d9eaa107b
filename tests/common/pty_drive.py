"""Runs a command on a pseudo-terminal and answers its prompts, for the interactive tests.

argv[1]: JSON list, the command; argv[2]: JSON list of [text to wait for, line to type].
Prints the whole terminal transcript on stdout and exits with the command's exit code.
"""

import json
import os
import pty
import select
import sys
import termios
import time

command = json.loads(sys.argv[1])
answers = json.loads(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(command[0], command)

transcript = b""
seen = 0
deadline = time.time() + 120
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        transcript += data
    if answers and answers[0][0].encode() in transcript[seen:]:
        seen = len(transcript)
        if "(hidden)" in answers[0][0]:
            # A person types after the terminal stops echoing; wait for that too, or the
            # answer could race the program switching echo off.
            limit = time.time() + 5
            while time.time() < limit and termios.tcgetattr(fd)[3] & termios.ECHO:
                time.sleep(0.01)
        os.write(fd, (answers.pop(0)[1] + "\n").encode())
_, status = os.waitpid(pid, 0)
sys.stdout.write(transcript.decode(errors="replace"))
if answers:
    sys.stdout.write("\n[pty_drive: unanswered prompts: %r]\n" % answers)
sys.exit(os.waitstatus_to_exitcode(status))
