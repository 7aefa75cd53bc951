#!/usr/bin/env python3
"""Writes the sources of the tool-calling workloads in this folder.

For each workload folder this writes `tools.json` (the OpenAI-style tools, from BFCL, with
BFCL's type names turned into JSON Schema), `structural_tag.json` (XGrammar's source),
`grammar.lark` (llguidance's source, the same language written by hand below),
`workload.json`, `samples.jsonl` (the samples listed below, one JSON object a line) and
`rejected.jsonl` (texts just outside the language). It checks that XGrammar accepts every
sample and rejects every rejected text.

Run it with the peers' Python, which has xgrammar 0.2.8:

    /work/peers-venv/bin/python benches/workloads/make_workloads.py [BFCL_DIR]

BFCL_DIR defaults to ../shared/data/tool-calling/bfcl beside the repository. The output is
deterministic; re-running it on an unchanged input rewrites the same bytes.
"""

import copy
import json
import os
import sys

import xgrammar
from xgrammar.builtin_structural_tag import get_model_structural_tag
from xgrammar.testing import _get_matcher_from_grammar

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BFCL = os.path.join(HERE, "..", "..", "..", "shared", "data", "tool-calling", "bfcl")

# llguidance's JSON options matching XGrammar's structural-tag JSON (flexible whitespace,
# any \uXXXX escape), as the harness's tool_call_qwen_structtag workload sets them.
X_GUIDANCE = {"whitespace_flexible": True, "json_allow_general_unicode_escapes": True}

BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array"}


def to_json_schema(schema):
    """BFCL's schema dialect to JSON Schema: `dict`/`float`/`tuple` renamed, `any` dropped,
    and `additionalProperties: false` on every object with `properties` (XGrammar's
    structural tags and llguidance then agree on closed objects)."""
    if isinstance(schema, list):
        return [to_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "type":
            if value == "any":
                continue
            out[key] = BFCL_TYPES.get(value, value)
        elif key in ("properties",):
            out[key] = {name: to_json_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
            out[key] = to_json_schema(value)
        else:
            out[key] = copy.deepcopy(value)
    if out.get("type") == "object" and "properties" in out:
        out.setdefault("additionalProperties", False)
    return out


def load_bfcl_functions(bfcl_dir, specs):
    """The BFCL definitions named by `specs`, in order. A spec is (function name, BFCL file,
    marker): the first definition of that name in that file whose parameters, as JSON,
    contain the marker (None: any). BFCL has several different definitions under one name."""
    tools = []
    for name, file_name, marker in specs:
        found = None
        with open(os.path.join(bfcl_dir, file_name), encoding="utf-8") as f:
            for line in f:
                for function in json.loads(line).get("function") or []:
                    if function["name"] != name:
                        continue
                    if marker is None or marker in json.dumps(function["parameters"]):
                        found = function
                        break
                if found is not None:
                    break
        if found is None:
            sys.exit(f"{name} ({marker!r}) not found in {file_name} under {bfcl_dir}")
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": found.get("description", ""),
                    "parameters": to_json_schema(found["parameters"]),
                },
            }
        )
    return tools


def openai_tools(tools):
    return [{"type": t["type"], "function": t["function"]} for t in tools]


def lark_str(text):
    """A Lark string literal (JSON's escapes are a subset of Lark's)."""
    return json.dumps(text, ensure_ascii=False)


def lark_json(schema):
    with_options = dict(schema)
    with_options["x-guidance"] = X_GUIDANCE
    return "%json " + json.dumps(with_options, ensure_ascii=False)


def rule_name(tool_name):
    return "args_" + "".join(c if c.isalnum() else "_" for c in tool_name).lower()


def write(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def write_workload(name, tools, structural_tag, lark, description, samples):
    folder = os.path.join(HERE, name)
    os.makedirs(folder, exist_ok=True)
    if tools is not None:
        write(folder, "tools.json", json.dumps(tools, indent=1, ensure_ascii=False) + "\n")
    if structural_tag is not None:
        write(
            folder,
            "structural_tag.json",
            json.dumps(structural_tag, indent=1, ensure_ascii=False) + "\n",
        )
    write(folder, "grammar.lark", lark)
    options = {"description": description, "json": {"whitespace": "flexible"}, "sources": {}}
    if structural_tag is not None:
        options["sources"]["xgrammar"] = "structural_tag.json"
    options["sources"]["llguidance"] = "grammar.lark"
    write(folder, "workload.json", json.dumps(options, indent=1, ensure_ascii=False) + "\n")
    write(
        folder,
        "samples.jsonl",
        "".join(json.dumps({"text": s}, ensure_ascii=False) + "\n" for s in samples),
    )
    # Every sample must be in XGrammar's language (the harness checks the rest).
    for index, sample in enumerate(samples):
        if not xgrammar_accepts(structural_tag, sample):
            sys.exit(f"{name}: sample {index} is not in XGrammar's language: {sample!r}")


def xgrammar_accepts(structural_tag, text):
    """Whether XGrammar's matcher for the structural tag takes all of `text` and ends."""
    grammar = xgrammar.Grammar.from_structural_tag(json.dumps(structural_tag))
    matcher = _get_matcher_from_grammar(grammar)
    return matcher.accept_string(text) and matcher.is_terminated()


def check_rejected_by_xgrammar(name, structural_tag, rejected):
    """The texts that show where the language ends must be outside XGrammar's language."""
    for index, text in enumerate(rejected):
        if xgrammar_accepts(structural_tag, text):
            sys.exit(f"{name}: rejected text {index} is in XGrammar's language: {text!r}")
    with open(os.path.join(HERE, name, "rejected.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in rejected)


# --- tool_call_harmony ---------------------------------------------------------------------

HARMONY_TOOLS = [
    ("open_meteo_api.fetch_weather_data", "BFCL_v4_live_simple.json", None),
    ("recipe_search", "BFCL_v4_multiple.json", '"calories"'),
    ("find_card_in_deck", "BFCL_v4_multiple.json", None),
]

HARMONY_DESCRIPTION = (
    "gpt-oss Harmony assistant turn (the text after the prompt's '<|start|>assistant'): "
    "analysis / final messages and function calls to 3 BFCL tools, messages separated by "
    "'<|start|>assistant', calls in all three header spellings, JSON arguments with flexible "
    "whitespace. XGrammar: get_model_structural_tag('harmony', tools) of xgrammar 0.2.8 "
    "(tags_with_separator; it writes <|channel|>, <|message|>, <|call|> etc. as text, not as "
    "token formats, and with o200k_base they are ordinary text anyway); llguidance: the Lark "
    "twin (lazy message bodies, %json arguments)."
)


def harmony_lark(tools):
    lines = [
        "// gpt-oss Harmony assistant turn: messages separated by <|start|>assistant, each an",
        "// analysis or final message (any text up to the first <|end|> or <|return|>) or a call",
        "// to a function tool (JSON arguments, then <|call|>). Same language as",
        "// structural_tag.json (XGrammar 0.2.8's get_model_structural_tag('harmony', tools)).",
        "// Written by make_workloads.py.",
        'start: [msg ("<|start|>assistant" msg)*]',
        "msg: analysis | final | call",
        'analysis: "<|channel|>analysis<|message|>" body',
        'final: "<|channel|>final<|message|>" body',
        r"body[lazy]: /(?s:.*)(<\|end\|>|<\|return\|>)/",
    ]
    alternatives = []
    for tool in tools:
        name = tool["function"]["name"]
        args = rule_name(name)
        for begin in (
            f"<|channel|>commentary to=functions.{name}<|constrain|>json<|message|>",
            f" to=functions.{name}<|channel|>commentary <|constrain|>json<|message|>",
            f" to=functions.{name}<|channel|>commentary json<|message|>",
        ):
            alternatives.append(f'{lark_str(begin)} {args} "<|call|>"')
    lines.append("call: " + "\n    | ".join(alternatives))
    for tool in tools:
        function = tool["function"]
        lines.append(f"{rule_name(function['name'])}: {lark_json(function['parameters'])}")
    return "\n".join(lines) + "\n"


HARMONY_SAMPLES = [
    # analysis, then a call with the recipient in the channel part
    "<|channel|>analysis<|message|>The user wants the current temperature in Oslo. Oslo is at "
    "about 59.91 N, 10.75 E, so I can call the Open-Meteo tool directly.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.open_meteo_api.fetch_weather_data"
    '<|constrain|>json<|message|>{"coordinates": [59.9139, 10.7522], "units": "Celsius"}'
    "<|call|>",
    # analysis, then a final answer
    "<|channel|>analysis<|message|>A greeting; no tool is needed.<|end|><|start|>assistant"
    "<|channel|>final<|message|>Hi there! How can I help you today?<|return|>",
    # a final answer only, unicode and a markdown table
    "<|channel|>final<|message|>Voilà — la « ratatouille » 🍆 serves 4.\n\n"
    "| step | time |\n|---|---|\n| chop | 10 min |\n| simmer | 45 min |\n\n"
    "東京 is at 35.68°N.<|return|>",
    # recipient after the role, <|constrain|> after a space
    " to=functions.recipe_search<|channel|>commentary <|constrain|>json<|message|>"
    '{"ingredients": ["chickpeas", "tahini", "lemon"], "calories": 450, "meal": "lunch"}'
    "<|call|>",
    # analysis, then two calls in a row, the second with a bare content type word
    "<|channel|>analysis<|message|>Two lookups: the weather in Kyoto and a dinner recipe "
    "under 600 kcal.<|end|><|start|>assistant<|channel|>commentary "
    "to=functions.open_meteo_api.fetch_weather_data<|constrain|>json<|message|>"
    '{"coordinates": [35.0116, 135.7681]}<|call|><|start|>assistant'
    " to=functions.recipe_search<|channel|>commentary json<|message|>"
    '{"ingredients": ["tofu", "miso", "ネギ"], "calories": 600, "meal": "dinner"}<|call|>',
    # escapes in the analysis text and in JSON strings, nested objects in an array
    '<|channel|>analysis<|message|>They wrote "find the Q♥ in C:\\cards\\deck.txt"; the deck '
    "is given inline.<|end|><|start|>assistant to=functions.find_card_in_deck"
    '<|channel|>commentary json<|message|>{"rank": "Queen", "suit": "Hearts", "deck": '
    '[{"rank": "Ace", "suit": "Spades"}, {"rank": "Queen", "suit": "Hearts"}, '
    '{"rank": "10", "suit": "Diamonds \\u2666"}, {"rank": "\\"Joker\\"", "suit": "none\\n"}]}'
    "<|call|>",
    # a multi-line analysis that quotes JSON, then a final answer closed by <|end|>
    "<|channel|>analysis<|message|>Tool result was:\n"
    '{"temperature": -3.4, "units": "Celsius"}\n'
    "So it is below freezing.<|end|><|start|>assistant<|channel|>final<|message|>"
    "It is −3.4 °C in Oslo right now — wear a warm coat.<|end|>",
]


HARMONY_REJECTED = [
    # text after the last message, with no separator
    "<|channel|>final<|message|>Hi<|return|>and more",
    # a tool that is not declared
    "<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{}<|call|>",
    # a required argument missing
    " to=functions.recipe_search<|channel|>commentary json<|message|>"
    '{"ingredients": ["rice"]}<|call|>',
    # an enum violated
    "<|channel|>commentary to=functions.open_meteo_api.fetch_weather_data<|constrain|>json"
    '<|message|>{"coordinates": [1, 2], "units": "Rankine"}<|call|>',
    # a message that is not closed
    "<|channel|>final<|message|>Hi",
]


def harmony_structural_tag(tools):
    return get_model_structural_tag("harmony", tools=tools).model_dump(mode="json")


# --- tool_call_qwen_parallel ---------------------------------------------------------------

QWEN_TOOLS = [
    ("ChaDri.change_drink", "BFCL_v4_live_multiple.json", None),
    ("uber.eat.order", "BFCL_v4_live_multiple.json", '"item": {'),
    ("hotel.find", "BFCL_v4_parallel_multiple.json", None),
    ("bank.calculate_balance", "BFCL_v4_parallel_multiple.json", None),
]

QWEN_DESCRIPTION = (
    "Qwen 3 tool calls, parallel calls on, reasoning on: thinking text up to '</think>', then "
    "'\\n\\n', then free text with any number of <tool_call> blocks for 4 BFCL tools (nested "
    "objects, enums, arrays of enums and of objects, numbers), JSON arguments with flexible "
    "whitespace; '<think>' and '</think>' are excluded from the free text. XGrammar: "
    "get_model_structural_tag('qwen_3', tools, parallel_tool_calls=True) of xgrammar 0.2.8; "
    "llguidance: the Lark twin (lazy lexemes with & / ~, %json arguments)."
)


def qwen_lark(tools):
    lines = [
        "// Qwen 3 tool calls, parallel calls on, reasoning on:",
        "//   THINK</think>\\n\\n TEXT (<tool_call>\\n{\"name\": \"NAME\", \"arguments\": ARGS}"
        "\\n</tool_call> TEXT)*",
        "// where THINK has no <think>, TEXT has no <think>, </think> or <tool_call>, ARGS is",
        "// JSON for the tool's schema. Same language as structural_tag.json (XGrammar 0.2.8's",
        "// get_model_structural_tag('qwen_3', tools)). Written by make_workloads.py.",
        'start: think "\\n\\n" call* tail',
        "think[lazy]: THINK",
        r"THINK: /(?s:.*)<\/think>/ & ~/(?s:.*)<think>(?s:.*)/",
        "call: head body",
        "head[lazy]: HEAD",
        r"HEAD: /(?s:.*)<tool_call>/ & ~/(?s:.*)<\/?think>(?s:.*)/",
        "tail: TAIL",
        r"TAIL: /(?s:.*)/ & ~/(?s:.*)(<tool_call>|<\/?think>)(?s:.*)/",
    ]
    alternatives = []
    for tool in tools:
        name = tool["function"]["name"]
        begin = '\n{"name": "' + name + '", "arguments": '
        alternatives.append(f'{lark_str(begin)} {rule_name(name)} "}}\\n</tool_call>"')
    lines.append("body: " + "\n    | ".join(alternatives))
    for tool in tools:
        function = tool["function"]
        lines.append(f"{rule_name(function['name'])}: {lark_json(function['parameters'])}")
    return "\n".join(lines) + "\n"


QWEN_SAMPLES = [
    # one call with a nested object of enums
    "The customer wants the latte changed: large, hot, almond milk, extra foam.\n</think>\n\n"
    '<tool_call>\n{"name": "ChaDri.change_drink", "arguments": {"drink_id": "latte-0042", '
    '"new_preferences": {"size": "large", "temperature": "hot", "milk_type": "almond", '
    '"special_instructions": "extra foam, no sugar"}}}\n</tool_call>',
    # two parallel calls: an array of enums, an array of objects
    "Two independent requests, so I can call both tools at once.\n</think>\n\n"
    '<tool_call>\n{"name": "hotel.find", "arguments": {"location": "Lisbon", "stars": 4, '
    '"amenities": ["Free WiFi", "Breakfast Included"]}}\n</tool_call>\n'
    '<tool_call>\n{"name": "uber.eat.order", "arguments": {"restaurant_id": "rest_8812", '
    '"items": [{"item": "pastel_de_nata", "quantity": 6}, {"item": "bica", "quantity": 2}]}}'
    "\n</tool_call>",
    # empty thinking, no call, unicode free text
    "\n</think>\n\nBonjour ! 🙂 Pas besoin d'outil : un « café crème » est un espresso allongé "
    "avec du lait chaud. 日本語でも説明できます。",
    # text before a call, numbers with fractions, exponents and signs
    "Sum the three transactions on top of a zero starting balance.\n</think>\n\n"
    "Let me compute that balance.\n"
    '<tool_call>\n{"name": "bank.calculate_balance", "arguments": {"account": '
    '"DE89 3704 0044 0532 0130 00", "transactions": [{"amount": 1250.75, "type": "credit"}, '
    '{"amount": -3.5e2, "type": "debit"}, {"amount": 0.99}], "starting_balance": 0.0}}'
    "\n</tool_call>",
    # thinking that mentions <tool_call>, three calls, escapes, text after the calls
    "I'll emit one <tool_call> per city; the user quoted \"Zürich\" and wants 5 stars there."
    "\n</think>\n\n"
    '<tool_call>\n{"name": "hotel.find", "arguments": {"location": "Z\\u00fcrich", "stars": 5, '
    '"amenities": ["Gym"]}}\n</tool_call>\n'
    '<tool_call>\n{"name": "hotel.find", "arguments": {"location": "S\\u00e3o Paulo", '
    '"stars": 3, "amenities": []}}\n</tool_call>\n'
    '<tool_call>\n{"name": "hotel.find", "arguments": {"location": "The \\"Big Apple\\"\\n'
    'New York", "stars": 4, "amenities": ["Free Parking", "Free WiFi"]}}\n</tool_call>\n'
    "I've started all three searches.",
    # free text with '<' and a near-miss of the trigger, then a call with an empty object
    "Minimal change: keep everything, only resend the order.\n</think>\n\n"
    "Note: 3 < 4 and the <tool_calls> list was empty, so:\n"
    '<tool_call>\n{"name": "ChaDri.change_drink", "arguments": {"drink_id": '
    '"C:\\\\orders\\\\0007\\ttab", "new_preferences": {}}}\n</tool_call>',
    # calls with irregular (flexible) whitespace in the arguments
    "Order food.\n</think>\n\n"
    '<tool_call>\n{"name": "uber.eat.order", "arguments": {\n  "restaurant_id": "ramen-ya",\n'
    '  "items": [\n    {"item": "shoyu ramen", "quantity": 1}\n  ]\n}}\n</tool_call>',
]


QWEN_REJECTED = [
    # no blank line after </think>
    "Thinking.</think>Hello",
    # <think> inside the thinking text
    "<think>nested</think>\n\nHello",
    # </think> in the free text
    "t\n</think>\n\nDone.</think>",
    # a required argument missing
    't\n</think>\n\n<tool_call>\n{"name": "hotel.find", "arguments": {"location": "Rome"}}'
    "\n</tool_call>",
    # an enum violated in a nested object
    't\n</think>\n\n<tool_call>\n{"name": "ChaDri.change_drink", "arguments": '
    '{"new_preferences": {"size": "huge"}}}\n</tool_call>',
    # an undeclared property
    't\n</think>\n\n<tool_call>\n{"name": "hotel.find", "arguments": {"location": "Rome", '
    '"stars": 3, "pool": true}}\n</tool_call>',
    # an unfinished call
    't\n</think>\n\n<tool_call>\n{"name": "hotel.find"',
]


def qwen_structural_tag(tools):
    return get_model_structural_tag(
        "qwen_3", tools=tools, parallel_tool_calls=True
    ).model_dump(mode="json")


# --- lark_json_tool ------------------------------------------------------------------------

REACT_TOOLS = [
    ("EuclideanDistance.calculate", "BFCL_v4_multiple.json", None),
    ("country_info.population", "BFCL_v4_multiple.json", None),
    ("get_activity_by_price", "BFCL_v4_live_multiple.json", None),
    ("get_personality_traits", "BFCL_v4_multiple.json", '"traits"'),
]

REACT_DESCRIPTION = (
    "ReAct transcript (Thought / Action / Action Input / Observation lines, ending with a "
    "Final Answer or a pending action) for 4 BFCL tools; a Lark grammar whose Action Inputs "
    "are %json inline schemas (llguidance's dialect), flexible JSON whitespace. XGrammar: an "
    "equivalent structural tag (sequence / star / or of const_string, regex, json_schema and "
    "any_text)."
)


def react_lark(tools):
    lines = [
        "// ReAct transcript: zero or more Thought/Action/Observation steps, then a Thought and",
        "// either a Final Answer (any text) or one more Action. Action Input is JSON for the",
        "// named tool (%json, flexible whitespace). Written by make_workloads.py.",
        "start: step* last",
        "step: thought action observation",
        "last: thought (answer | action)",
        'thought: "Thought: " LINE "\\n"',
        'observation: "Observation: " LINE "\\n"',
        'answer: "Final Answer: " ANSWER',
        r"LINE: /[^\n]+/",
        "ANSWER: /(?s:.*)/",
    ]
    alternatives = []
    for tool in tools:
        name = tool["function"]["name"]
        head = f"Action: {name}\nAction Input: "
        alternatives.append(f'{lark_str(head)} {rule_name(name)} "\\n"')
    lines.append("action: " + "\n    | ".join(alternatives))
    for tool in tools:
        function = tool["function"]
        lines.append(f"{rule_name(function['name'])}: {lark_json(function['parameters'])}")
    return "\n".join(lines) + "\n"


def react_structural_tag(tools):
    def const(text):
        return {"type": "const_string", "value": text}

    def line(label):
        return {
            "type": "sequence",
            "elements": [const(label), {"type": "regex", "pattern": "[^\\n]+"}, const("\n")],
        }

    action = {
        "type": "or",
        "elements": [
            {
                "type": "sequence",
                "elements": [
                    const(f"Action: {t['function']['name']}\nAction Input: "),
                    {"type": "json_schema", "json_schema": t["function"]["parameters"]},
                    const("\n"),
                ],
            }
            for t in tools
        ],
    }
    answer = {"type": "sequence", "elements": [const("Final Answer: "), {"type": "any_text"}]}
    step = {"type": "sequence", "elements": [line("Thought: "), action, line("Observation: ")]}
    last = {
        "type": "sequence",
        "elements": [line("Thought: "), {"type": "or", "elements": [answer, action]}],
    }
    root = {"type": "sequence", "elements": [{"type": "star", "content": step}, last]}
    return {"type": "structural_tag", "format": root}


REACT_SAMPLES = [
    # one pending action
    "Thought: I need the population of Japan.\nAction: country_info.population\n"
    'Action Input: {"country": "Japan"}\n',
    # a full step, then the final answer
    "Thought: I should look up France's population first.\n"
    "Action: country_info.population\nAction Input: {\"country\": \"France\"}\n"
    "Observation: 68,042,591 (INSEE, 1 January 2024)\n"
    "Thought: I now know the final answer.\n"
    "Final Answer: France has about 68 million inhabitants.",
    # no tool: a multi-line unicode answer
    "Thought: No tool is needed; this is a definition question.\n"
    "Final Answer: Die euklidische Distanz ist √((x₂−x₁)² + (y₂−y₁)²).\n"
    "Beispiel: d((0,0),(3,4)) = 5 ✓",
    # two steps with different tools, then a pending action
    "Thought: First the distance between the two sensors.\n"
    "Action: EuclideanDistance.calculate\n"
    'Action Input: {"pointA": [0, 0, 12], "pointB": [-3, 4, 12], "rounding": 2}\n'
    "Observation: 5.0\n"
    "Thought: Now the traits the user asked about.\n"
    "Action: get_personality_traits\n"
    'Action Input: {"type": "INTJ \\"Architect\\"", "traits": ["strengths", "weaknesses"]}\n'
    "Observation: {\"strengths\": [\"strategic\"], \"weaknesses\": [\"arrogant\"]}\n"
    "Thought: Also look for cheap activities nearby.\n"
    "Action: get_activity_by_price\n"
    'Action Input: {"price": {"min_price": 0, "max_price": 25.5}, "sort_order": "desc"}\n',
    # nested object with flexible whitespace, escapes and a \u escape, then an answer
    "Thought: The user wants activities between 10 and 49.99 USD, cheapest first.\n"
    "Action: get_activity_by_price\n"
    'Action Input: {\n  "price": {"min_price": 10.0, "max_price": 49.99},\n'
    '  "sort_order": "asc"\n}\n'
    "Observation: [\"Kayak tour \\u2014 $15\", \"Museum \\\"late night\\\" — $22\"]\n"
    "Thought: Two matches.\n"
    "Final Answer: Kayak tour ($15) and the museum's late-night opening ($22).",
    # unicode in a JSON string and an empty final answer
    "Thought: Population of Côte d’Ivoire, then answer.\n"
    "Action: country_info.population\n"
    'Action Input: {"country": "C\\u00f4te d’Ivoire 🇨🇮"}\n'
    "Observation: 31.2 million\n"
    "Thought: Done; the observation already answers it.\n"
    "Final Answer: ",
]


REACT_REJECTED = [
    # an empty Thought line
    "Thought: \nFinal Answer: x",
    # no Thought before the action
    'Action: country_info.population\nAction Input: {"country": "Japan"}\n',
    # a step without its Observation
    'Thought: t\nAction: country_info.population\nAction Input: {"country": "Japan"}\n'
    "Thought: u\nFinal Answer: x",
    # an enum violated in an array
    'Thought: t\nAction: get_personality_traits\nAction Input: {"type": "x", "traits": '
    '["virtues"]}\n',
    # an unknown tool
    'Thought: t\nAction: search\nAction Input: {"q": "x"}\n',
]


WORKLOADS = [
    ("tool_call_harmony", HARMONY_TOOLS, harmony_structural_tag, harmony_lark,
     HARMONY_DESCRIPTION, HARMONY_SAMPLES, HARMONY_REJECTED),
    ("tool_call_qwen_parallel", QWEN_TOOLS, qwen_structural_tag, qwen_lark,
     QWEN_DESCRIPTION, QWEN_SAMPLES, QWEN_REJECTED),
    ("lark_json_tool", REACT_TOOLS, react_structural_tag, react_lark,
     REACT_DESCRIPTION, REACT_SAMPLES, REACT_REJECTED),
]


def main():
    bfcl_dir = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_BFCL
    for name, tool_names, make_tag, make_lark, description, samples, rejected in WORKLOADS:
        tools = load_bfcl_functions(bfcl_dir, tool_names)
        rule_names = {rule_name(t["function"]["name"]) for t in tools}
        if len(rule_names) != len(tools):
            sys.exit(f"{name}: two tools share a Lark rule name: {sorted(rule_names)}")
        structural_tag = make_tag(openai_tools(tools))
        write_workload(name, tools, structural_tag, make_lark(tools), description, samples)
        check_rejected_by_xgrammar(name, structural_tag, rejected)
        print(f"{name}: {len(tools)} tools, {len(samples)} samples, {len(rejected)} rejected texts")


if __name__ == "__main__":
    main()
