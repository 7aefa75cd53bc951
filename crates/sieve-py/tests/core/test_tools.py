"""``sieve.compile_tools``: OpenAI-style tools in a model's tool-call format."""

import json

import pytest

import sieve

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def accepts(compiled, text):
    matcher = sieve.Matcher(compiled)
    return matcher.accept_string(text) and matcher.can_terminate()


def test_tools_as_list_or_string(tok):
    for tools in ([WEATHER, TIME], json.dumps([WEATHER, TIME])):
        compiled = sieve.compile_tools(tok, tools, format="qwen_3", reasoning="disabled")
        assert accepts(compiled, "Let me look. " + CALL)
        assert accepts(compiled, "No call.")
        assert not accepts(compiled, CALL.replace("Paris", "Paris\", \"x\": \"1"))


def test_choice_parallel_calls_and_reasoning(tok):
    tools = [WEATHER, TIME]
    required = sieve.compile_tools(tok, tools, format="qwen_3", tool_choice="required", reasoning=False)
    assert not accepts(required, "No call.")
    assert accepts(required, CALL + CALL)
    single = sieve.compile_tools(
        tok, tools, format="qwen_3", tool_choice="required", parallel_tool_calls=False, reasoning="disabled"
    )
    assert accepts(single, CALL) and not accepts(single, CALL + CALL)
    named = sieve.compile_tools(
        tok, tools, format="llama", tool_choice={"type": "function", "function": {"name": "get_time"}}
    )
    assert accepts(named, '{"name": "get_time", "parameters": {}}')
    assert not accepts(named, '{"name": "get_weather", "parameters": {"city": "Paris"}}')
    thinking = sieve.compile_tools(tok, tools, format="qwen_3")
    assert accepts(thinking, "Hmm.</think>\n\n" + CALL)
    assert not accepts(thinking, CALL)


def test_errors(tok):
    with pytest.raises(sieve.CompileError, match="unknown tool format \"gpt_2\".*harmony"):
        sieve.compile_tools(tok, [WEATHER], format="gpt_2")
    with pytest.raises(sieve.CompileError, match="/tool_choice"):
        sieve.compile_tools(tok, [WEATHER], format="qwen_3", tool_choice="required_ish")
    with pytest.raises(sieve.CompileError, match="/tools/0/function/parameter: unknown field"):
        sieve.compile_tools(tok, [{"type": "function", "function": {"name": "f", "parameter": {}}}], format="llama")
    with pytest.raises(ValueError, match="tools: not JSON"):
        sieve.compile_tools(tok, "[", format="llama")
