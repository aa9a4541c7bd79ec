# A command tool in Python: the arguments on stdin, the result on stdout, both JSON.
import json
import sys

arguments = json.load(sys.stdin)
json.dump({"words": len(arguments["text"].split())}, sys.stdout)
