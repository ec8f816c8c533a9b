"A task of your own (chapter 08a): Countdown with every number used. Written by nbs/08a_lmtask.ipynb."
import re
from nanorl.tasks import extract_answer, safe_eval


def uses_every_number(prompt, completion, answer):
    "1 if the answer reaches the target `answer` with every number of the prompt, each used once."
    words = prompt.split()
    nums = [int(n) for n in words[1:words.index('target')]]
    expr = extract_answer(completion) or ''
    used = sorted(int(n) for n in re.findall(r'[0-9]+', expr))
    return float(used == sorted(nums) and safe_eval(expr, nums) == answer)
