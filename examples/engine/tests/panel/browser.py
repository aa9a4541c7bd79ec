"""Drives the engine's web panel in a real browser: Debian's Chromium, headless, through
chromedriver with Selenium (pinned in tests/oracle/requirements.txt). Reads a plan as
JSON on stdin: {"scenario", "base" (http://127.0.0.1:PORT), "token", "screenshot" (a
path), ...}; answers what it saw as JSON on stdout. A step that does not happen in its
time raises, and the process ends non-zero with what the page showed."""

import json
import os
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as seen
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = os.environ.get("PLUGIN_SDK_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("PLUGIN_SDK_CHROMEDRIVER", "/usr/bin/chromedriver")


def browser(plan, profile):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,900",
        f"--user-data-dir={profile}",
    ]:
        options.add_argument(flag)
    language = plan.get("language", "en-US")
    options.add_argument(f"--lang={language}")
    options.add_experimental_option("prefs", {"intl.accept_languages": language})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def wait(driver, seconds=10):
    return WebDriverWait(driver, seconds, poll_frequency=0.05)


def sign_in(driver, plan, token=None):
    driver.get(plan["base"] + plan.get("start", "/"))
    wait(driver).until(seen.presence_of_element_located((By.ID, "token")))
    driver.find_element(By.ID, "token").send_keys(token or plan["token"])
    driver.find_element(By.CSS_SELECTOR, "form.login button").click()


def login(driver, plan):
    driver.get(plan["base"] + "/agents/bot/tools")
    sent_to = driver.current_url
    sign_in(driver, plan, token="not-the-token-" + "x" * 40)
    alert = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "p.error"))).text
    refused_at = driver.current_url
    driver.find_element(By.ID, "token").send_keys(plan["token"])
    driver.find_element(By.CSS_SELECTOR, "form.login button").click()
    wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "main h1")))
    driver.save_screenshot(plan["screenshot"])
    return {
        "sent_to": sent_to,
        "refused_alert": alert,
        "refused_at": refused_at,
        "signed_in_at": driver.current_url,
        "h1": driver.find_element(By.CSS_SELECTOR, "main h1").text,
        "cookie_seen_by_scripts": driver.execute_script("return document.cookie"),
    }


def tools(driver, plan):
    sign_in(driver, plan)
    wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "tr.tool")))
    rows = driver.find_elements(By.CSS_SELECTOR, "tr.tool")
    driver.save_screenshot(plan["screenshot"])
    return {
        "h1": driver.find_element(By.CSS_SELECTOR, "main h1").text,
        "lang": driver.find_element(By.TAG_NAME, "html").get_attribute("lang"),
        "summaries": {
            row.get_attribute("data-tool"): row.find_element(By.CSS_SELECTOR, ".summary").text
            for row in rows
        },
        "categories": [h.text for h in driver.find_elements(By.CSS_SELECTOR, "section.plugin h3")],
        "plugins": [h.text for h in driver.find_elements(By.CSS_SELECTOR, "section.plugin h2")],
    }


def switch(driver, plan):
    sign_in(driver, plan)
    row = f'tr.tool[data-tool="{plan["tool"]}"]'
    wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, row)))
    before = driver.find_element(By.CSS_SELECTOR, row + " td.state").text
    driver.find_element(By.CSS_SELECTOR, row + " button.switch").click()
    flash = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "p.flash"))).text
    driver.save_screenshot(plan["screenshot"])
    return {
        "before": before,
        "flash": flash,
        "after": driver.find_element(By.CSS_SELECTOR, row + " td.state").text,
        "button": driver.find_element(By.CSS_SELECTOR, row + " button.switch").text,
    }


def extension_error(driver, plan):
    sign_in(driver, plan)
    driver.get(plan["base"] + "/extensions")
    wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "main h1")))
    # The script polls once before the file comes: the change is then a change.
    time.sleep(0.5)
    with open(plan["file"], "w") as broken:
        broken.write(plan["text"])
    dropped = time.monotonic()
    selector = f'tr.extension[data-path$="{os.path.basename(plan["file"])}"] .error'
    error = wait(driver, 5).until(seen.presence_of_element_located((By.CSS_SELECTOR, selector))).text
    seconds = time.monotonic() - dropped
    driver.save_screenshot(plan["screenshot"])
    return {"error": error, "seconds": seconds, "url": driver.current_url}


def chat(driver, plan):
    sign_in(driver, plan)
    driver.get(plan["base"] + "/agents/bot/chat")
    box = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, 'textarea[name="message"]')))
    box.send_keys(plan["message"])
    driver.find_element(By.CSS_SELECTOR, "form.chat-form button").click()
    line = wait(driver, 20).until(seen.presence_of_element_located((By.CSS_SELECTOR, "details.activity")))
    collapsed = line.get_attribute("open") is None
    arguments = line.find_element(By.CSS_SELECTOR, "pre.arguments")
    hidden_before = not arguments.is_displayed()
    name = line.find_element(By.CSS_SELECTOR, "summary .name").text
    line.find_element(By.TAG_NAME, "summary").click()
    shown_after = arguments.is_displayed()
    status = line.find_element(By.CSS_SELECTOR, ".status")
    wait(driver, 20).until(lambda _: "ms" in status.text)
    ended = status.text
    reply_when_ended = [node.text for node in driver.find_elements(By.CSS_SELECTOR, ".chat-log .reply")]
    done = wait(driver, 20).until(seen.presence_of_element_located((By.CSS_SELECTOR, ".chat-log .done")))
    driver.save_screenshot(plan["screenshot"])
    return {
        "name": name,
        "collapsed": collapsed,
        "arguments_hidden_before": hidden_before,
        "arguments_shown_after": shown_after,
        "arguments": arguments.text,
        "status": ended,
        "status_class": status.get_attribute("class"),
        "reply_when_the_call_ended": reply_when_ended,
        "reply": [node.text for node in driver.find_elements(By.CSS_SELECTOR, ".chat-log .reply")],
        "done": done.text,
        "actions": [node.text for node in driver.find_elements(By.CSS_SELECTOR, ".chat-log .action")],
    }


def conversations(driver, plan):
    sign_in(driver, plan)
    driver.get(plan["base"] + "/agents/bot/conversations")
    row = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "tr.conversation")))
    listed = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
    row.find_element(By.TAG_NAME, "a").click()
    wait(driver).until(seen.presence_of_element_located((By.ID, "history")))
    calls = driver.find_elements(By.CSS_SELECTOR, "#history details.activity")
    collapsed = all(call.get_attribute("open") is None for call in calls)
    turns = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in driver.find_elements(By.CSS_SELECTOR, "tr.turn")]
    driver.save_screenshot(plan["screenshot"])
    return {
        "listed": listed,
        "users": [node.text for node in driver.find_elements(By.CSS_SELECTOR, "#history .user")],
        "replies": [node.text for node in driver.find_elements(By.CSS_SELECTOR, "#history .reply")],
        "activity": [call.find_element(By.CSS_SELECTOR, "summary").text for call in calls],
        "collapsed": collapsed,
        "turns": turns,
        "actions": [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in driver.find_elements(By.CSS_SELECTOR, "tr.action")],
    }


def knowledge(driver, plan):
    sign_in(driver, plan)
    page = plan["base"] + "/agents/bot/knowledge"
    driver.get(page)
    upload = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, 'input[type="file"]')))
    upload.send_keys(plan["file"])
    upload.find_element(By.XPATH, "./ancestor::form").find_element(By.TAG_NAME, "button").click()
    name = os.path.basename(plan["file"])
    row = wait(driver).until(
        lambda d: next((r for r in d.find_elements(By.CSS_SELECTOR, "tr.document") if r.find_element(By.CSS_SELECTOR, ".filename").text == name), None)
    )
    uploaded = {"flash": driver.find_element(By.CSS_SELECTOR, "p.flash").text, "origin": row.find_elements(By.TAG_NAME, "td")[1].text}
    search = driver.find_element(By.CSS_SELECTOR, 'input[type="search"]')
    search.send_keys(plan["query"])
    search.submit()
    hits = wait(driver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "tr.hit"))
    found = [hit.find_element(By.TAG_NAME, "td").text for hit in hits]
    driver.save_screenshot(plan["screenshot"])
    driver.get(page)
    row = next(r for r in driver.find_elements(By.CSS_SELECTOR, "tr.document") if r.find_element(By.CSS_SELECTOR, ".filename").text == name)
    row.find_element(By.CSS_SELECTOR, "button.danger").click()
    flash = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "p.flash"))).text
    left = [r.find_element(By.CSS_SELECTOR, ".filename").text for r in driver.find_elements(By.CSS_SELECTOR, "tr.document")]
    return {"uploaded": uploaded, "found": found, "deleted_flash": flash, "left": left}


def secret(driver, plan):
    sign_in(driver, plan)
    driver.get(plan["base"] + "/agents/bot/secrets")
    section = f'section.secret[data-key="{plan["key"]}"]'
    wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, section)))
    field = driver.find_element(By.CSS_SELECTOR, section + ' [name="value"]')
    kind = field.get_attribute("type")
    environment = driver.find_element(By.CSS_SELECTOR, f'section.secret[data-key="{plan["env_key"]}"]')
    environment_said = {"source": environment.get_attribute("data-source"), "text": environment.find_element(By.CSS_SELECTOR, ".tag").text}
    field.send_keys(plan["value"])
    field.find_element(By.XPATH, "./ancestor::form").find_element(By.TAG_NAME, "button").click()
    flash = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "p.flash"))).text
    after = driver.find_element(By.CSS_SELECTOR, section)
    shown_after = {"source": after.get_attribute("data-source"), "field_value": after.find_element(By.CSS_SELECTOR, '[name="value"]').get_attribute("value")}
    driver.save_screenshot(plan["screenshot"])
    secrets_page = driver.page_source
    driver.get(plan["base"] + "/agents/bot/tools")
    row = f'tr.tool[data-tool="{plan["tool"]}"]'
    state = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, row + " td.state"))).text
    return {
        "kind": kind,
        "environment": environment_said,
        "flash": flash,
        "after": shown_after,
        "value_in_a_page": plan["value"] in secrets_page or plan["value"] in driver.page_source,
        "tool_state": state,
    }


SCENARIOS = {
    "login": login,
    "tools": tools,
    "switch": switch,
    "extension_error": extension_error,
    "chat": chat,
    "knowledge": knowledge,
    "secret": secret,
    "conversations": conversations,
}


def main():
    plan = json.load(sys.stdin)
    with tempfile.TemporaryDirectory(prefix="engine-panel-chromium-") as profile:
        driver = browser(plan, profile)
        try:
            seen_ = SCENARIOS[plan["scenario"]](driver, plan)
        except Exception:
            try:
                print(driver.page_source[:4000], file=sys.stderr)
            finally:
                driver.quit()
            raise
        driver.quit()
    json.dump(seen_, sys.stdout)


if __name__ == "__main__":
    main()
