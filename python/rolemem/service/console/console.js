// The rolemem console: reads the service's own JSON routes (the same ones the game and the
// designers call) and draws them. No framework, nothing fetched from outside this server.
"use strict";

const $ = (id) => document.getElementById(id);
// times as players and designers read them: to the minute
const minute = (time) => time.replace("T", " ").slice(0, 16);

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child ?? "");
  return node;
}

async function call(path, body, method = body === undefined ? "GET" : "POST") {
  const headers = { "Content-Type": "application/json" };
  // the designer routes take the designer key when the service has one
  const designer = path === "/config" || path.startsWith("/config/");
  const key = (designer && $("designer-key").value) || $("key").value;
  if (key) headers["X-API-Key"] = key;
  const answer = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await answer.json();
  if (!answer.ok) {
    const error = data.error || {};
    const failure = new Error(`${answer.status} ${error.type || ""}: ${error.message || answer.statusText}`);
    failure.status = answer.status;
    throw failure;
  }
  return data;
}

function shown(error) {
  $("error").hidden = !error;
  $("error").textContent = error ? error.message : "";
}

async function guarded(work) {
  try {
    shown(null);
    await work();
  } catch (error) {
    shown(error);
  }
}

function drawMatrix(cells) {
  const table = $("matrix");
  table.replaceChildren();
  const levels = [...new Set(cells.map((c) => c.intimacy))].sort((a, b) => a - b);
  const head = element("tr", {}, element("th", {}, "entry"), element("th", {}, "content"));
  for (const intimacy of levels) {
    for (const exploration of levels) {
      head.append(element("th", { class: "level", title: `intimacy ${intimacy}, exploration ${exploration}` },
        exploration === levels[0] ? String(intimacy) : ""));
    }
  }
  head.append(element("th", {}, "other fields"));
  table.append(element("thead", {}, head));
  const body = element("tbody");
  const entries = new Map();
  for (const cell of cells) {
    if (!entries.has(cell.entry_key)) entries.set(cell.entry_key, []);
    entries.get(cell.entry_key).push(cell);
  }
  for (const [key, row] of entries) {
    const first = row[0];
    const line = element("tr", { "data-entry": key },
      element("td", {}, `${key} ${first.group_name ?? ""}`), element("td", {}, first.content));
    for (const cell of row) {
      const state = cell.is_unlocked ? "unlocked" : cell.is_unlocked_by_levels ? "needs-other" : "locked";
      line.append(element("td", {
        class: `cell ${state}`,
        title: `intimacy ${cell.intimacy}, exploration ${cell.exploration}: ${state}`,
      }));
    }
    line.append(element("td", {}, first.other_fields));
    body.append(line);
  }
  table.append(body);
}

function drawRecall(answer) {
  const blocks = $("blocks");
  blocks.replaceChildren();
  for (const [name, title] of [
    ["character_memory_attributes", "attributes"],
    ["character_memory_event", "events"],
    ["character_dialogue_style", "dialogue style"],
  ]) {
    blocks.append(element("h3", {}, title), element("pre", { class: "block", "data-block": name }, answer[name] || "(empty)"));
  }
  const table = $("explain");
  table.replaceChildren(element("tr", {}, ...["entry", "status", "reason", "matched"].map((h) => element("th", {}, h))));
  for (const row of answer.explain) {
    table.append(element("tr", { class: row.status, "data-entry": row.entry_key },
      element("td", {}, `${row.entry_key} ${row.content}`), element("td", {}, row.status),
      element("td", {}, row.reason), element("td", {}, row.matched_words ?? "")));
  }
}

function drawPlayer(timeline, page) {
  $("timeline").replaceChildren(...timeline.map((event) =>
    element("li", {}, `${minute(event.created_at)} ${event.place ?? ""}：${event.description}`)));
  const table = $("memories");
  table.replaceChildren(element("tr", {},
    ...["kind", "memory", "strength", "recalled", ""].map((h) => element("th", {}, h))));
  for (const item of page.items) {
    const row = element("tr", {
      "data-memory": `${item.memory_type}:${item.memory_id}`,
      class: item.is_pinned ? "pinned" : "",
    },
      element("td", {}, item.memory_type === "entity" ? item.entity_kind : "event"),
      element("td", {}, item.description), element("td", {}, String(item.strength)),
      element("td", {}, String(item.recall_count)), element("td", {}));
    // the same routes the game calls: pinned memories are never archived by cleanup; forget
    // archives (reason deleted), never destroys
    const path = `/users/${encodeURIComponent(item.user_id)}/memories/${item.memory_type}/${item.memory_id}`;
    const pin = element("button", { class: "pin" }, item.is_pinned ? "unpin" : "pin");
    pin.addEventListener("click", () => guarded(async () => {
      await call(path, { is_pinned: !item.is_pinned }, "PATCH");
      await showPlayer();
    }));
    const forget = element("button", { class: "forget" }, "forget");
    forget.addEventListener("click", () => guarded(async () => {
      await call(path, undefined, "DELETE");
      await showPlayer();
    }));
    row.lastChild.append(pin, forget);
    table.append(row);
  }
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes = {}, text = "") {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.textContent = text;
  return node;
}

function drawStrength(items) {
  const plot = $("strength");
  plot.replaceChildren();
  const events = items.filter((item) => item.memory_type === "event");
  if (!events.length) return;
  const width = Number(plot.getAttribute("width"));
  const height = Number(plot.getAttribute("height"));
  const [left, right, top, bottom] = [36, 10, 10, 24];
  const times = events.map((item) => Date.parse(item.created_at));
  const [first, last] = [Math.min(...times), Math.max(...times)];
  const strongest = Math.max(...events.map((item) => item.strength), 1);
  const x = (time) => left + (last === first ? 0.5 : (time - first) / (last - first)) * (width - left - right);
  const y = (strength) => height - bottom - (Math.log(Math.max(strength, 1)) / Math.log(Math.max(strongest, 2))) * (height - top - bottom);
  plot.append(
    svg("line", { x1: left, y1: height - bottom, x2: width - right, y2: height - bottom, class: "axis" }),
    svg("line", { x1: left, y1: top, x2: left, y2: height - bottom, class: "axis" }),
    svg("text", { x: left, y: height - 6, class: "tick" }, events.length ? new Date(first).toISOString().slice(0, 10) : ""),
    svg("text", { x: width - right, y: height - 6, class: "tick", "text-anchor": "end" }, new Date(last).toISOString().slice(0, 10)),
    svg("text", { x: left - 4, y: top + 8, class: "tick", "text-anchor": "end" }, strongest > 1 ? String(strongest) : ""),
    svg("text", { x: left - 4, y: height - bottom, class: "tick", "text-anchor": "end" }, "1"),
  );
  events.forEach((item, index) => {
    const point = svg("circle", {
      cx: x(times[index]), cy: y(item.strength), r: 4,
      class: item.is_pinned ? "point pinned" : "point",
      "data-memory": `event:${item.memory_id}`,
    });
    point.append(svg("title", {}, `${minute(item.created_at)} strength ${item.strength}: ${item.description}`));
    plot.append(point);
  });
}

function drawArchive(page) {
  const table = $("archive");
  table.replaceChildren(element("tr", {}, ...["kind", "memory", "reason", "strength", "archived"].map((h) => element("th", {}, h))));
  for (const item of page.items) {
    table.append(element("tr", { "data-memory": `${item.memory_type}:${item.memory_id}`, class: item.reason },
      element("td", {}, item.memory_type), element("td", {}, item.memory.description ?? ""),
      element("td", {}, item.reason), element("td", {}, String(item.strength)),
      element("td", {}, minute(item.archived_at))));
  }
}

async function showPlayer() {
  const user = encodeURIComponent($("player-user").value);
  const agent = encodeURIComponent($("player-agent").value);
  const memories = await call(`/users/${user}/memories?agent_id=${agent}&limit=100`);
  drawPlayer(await call(`/users/${user}/timeline?agent_id=${agent}`), memories);
  drawStrength(memories.items);
  drawArchive(await call(`/users/${user}/archive?agent_id=${agent}&limit=100`));
}

const character = () => encodeURIComponent($("character").value);

// the characters of the designer config, the one chosen kept when it is still there
async function loadCharacters() {
  const select = $("character");
  const chosen = select.value || select.dataset.preferred;
  const { characters } = await call("/config");
  select.replaceChildren(...characters.map((item) =>
    element("option", { value: item.character_id }, item.character_id)));
  if (characters.some((item) => item.character_id === chosen)) select.value = chosen;
}

async function showCharacter() {
  drawMatrix((await call(`/config/${character()}/unlock_matrix`)).cells);
}

// the player's name as the service holds it: the newest of the player's saves that names
// the player (POST /saves {user_name}); the preview fills {{user}} / {{char}} with the names
// shown, the ids where none is known, so no placeholder is ever shown
async function fillNames() {
  const user = encodeURIComponent($("user").value);
  const page = await call(`/users/${user}/saves`);
  let name = "";
  for (const save of [...page.items].reverse()) {
    const detail = await call(`/saves/${save.save_id}?user_id=${user}`);
    if (detail.user_name) {
      name = detail.user_name;
      break;
    }
  }
  $("user-name").value = name;
  $("user-name").placeholder = $("user").value;
  $("char-name").placeholder = $("character").value;
}

async function preview() {
  const context = {};
  for (const field of ["intimacy", "exploration"]) {
    if ($(field).value !== "") context[field] = Number($(field).value);
  }
  if ($("scene").value) context.scene = $("scene").value;
  drawRecall(await call("/recall", {
    character_id: $("character").value, user_id: $("user").value, text: $("text").value,
    user_name: $("user-name").value || $("user").value,
    char_name: $("char-name").value || $("character").value,
    context, explain: true, dry_run: true,
  }));
}

// everything the page shows, for the character chosen
async function load() {
  await loadCharacters();
  $("hint").hidden = true;
  $("player-agent").value = $("character").value;
  await showCharacter();
  await fillNames();
  await preview();
  await showPlayer();
}

$("connection").addEventListener("submit", (event) => {
  event.preventDefault();
  guarded(load);
});

$("character").addEventListener("change", () => guarded(async () => {
  $("player-agent").value = $("character").value;
  $("char-name").value = "";
  await showCharacter();
  await fillNames();
  await preview();
  await showPlayer();
}));

$("user").addEventListener("change", () => guarded(fillNames));

$("preview").addEventListener("submit", (event) => {
  event.preventDefault();
  guarded(preview);
});

$("player").addEventListener("submit", (event) => {
  event.preventDefault();
  guarded(showPlayer);
});

// on open: everything, when the service needs no key; else a word on what to type
load().catch((error) => {
  if (error.status === 401) {
    $("hint").textContent = "This service needs a key: type it above and press Load.";
    $("hint").hidden = false;
  } else {
    shown(error);
  }
});
