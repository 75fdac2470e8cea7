"""LangChain's SQL agent against the mock model, one question.

Flavours:
- create_agent: the current recommended way (langchain 1.x `langchain.agents.create_agent`, a LangGraph
  ReAct graph) with the tools of `SQLDatabaseToolkit` and the toolkit's own SQL_PREFIX as system prompt.
- create_sql_agent: langchain_community's `create_sql_agent(..., agent_type="tool-calling")` (an AgentExecutor).

The model is `ChatOpenAI(base_url=<mock>, model="mock")`; the mock decides the tool calls.

Run: python lc_agent.py FLAVOUR DB_URL BASE_URL [REPEAT]
  REPEAT absent: one run, prints the answer (the whole process is what is timed from outside).
  REPEAT = R: builds the agent once and runs the question R times in this process, then prints one JSON line
  {"build_s", "runs_s": [...]} (per-run time without interpreter start-up and imports).
"""

import json
import sys
import time

t_start = time.perf_counter()
from langchain_community.agent_toolkits import SQLDatabaseToolkit  # noqa: E402
from langchain_community.agent_toolkits.sql.prompt import SQL_PREFIX  # noqa: E402
from langchain_community.utilities import SQLDatabase  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402

QUESTION = "Which artists have the most albums, which countries spend the most, and which genres have most tracks?"


def build(flavour, db_url, base_url):
    db = SQLDatabase.from_uri(db_url)
    llm = ChatOpenAI(model="mock", base_url=base_url, api_key="test", temperature=0, max_retries=0)
    toolkit = SQLDatabaseToolkit(db=db, llm=llm)
    if flavour == "create_agent":
        from langchain.agents import create_agent

        agent = create_agent(llm, toolkit.get_tools(), system_prompt=SQL_PREFIX.format(dialect=db.dialect, top_k=5))

        def run():
            out = agent.invoke({"messages": [{"role": "user", "content": QUESTION}]}, {"recursion_limit": 1000})
            return out["messages"][-1].content

        return run
    if flavour == "create_sql_agent":
        from langchain_community.agent_toolkits import create_sql_agent

        executor = create_sql_agent(llm, toolkit=toolkit, agent_type="tool-calling", max_iterations=1000)

        def run():
            return executor.invoke({"input": QUESTION})["output"]

        return run
    raise SystemExit(f"unknown flavour {flavour}")


def main():
    flavour, db_url, base_url = sys.argv[1:4]
    repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    run = build(flavour, db_url, base_url)
    if not repeat:
        print(run())
        return
    build_s = time.perf_counter() - t_start
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        answer = run()
        times.append(time.perf_counter() - t)
        if "MOCK ERROR" in answer or "Iron Maiden" not in answer:
            raise SystemExit(f"unexpected answer: {answer}")
    print(json.dumps({"build_s": build_s, "runs_s": times}))


if __name__ == "__main__":
    main()
