// A spoken conversation with examples/voice-bot through the real Pipecat
// client in headless Chromium. Chromium's fake microphone plays a
// WAV composed at test time from espeak-ng speech: a question, a pause in
// which the bot starts its (long) answer, then a second utterance over that
// answer. The bot's transcription and chat services are fakes in this test
// (OpenAI-compatible HTTP on loopback); espeak-ng speaks its answers. The
// page meters the real audio energy of the microphone and of the bot's
// track (src/voice.js) and stamps the bot's RTVI messages; the checks below
// read that record. Skipped without espeak-ng.
//
// Times are in the page's audio clock, in ms; the meter's resolution is one
// 10 ms block. The measured figures are printed and written to
// dist/voice-report.json.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Target, closePage, e2eDir } from "../lib/harness.mjs";
import {
  hasEspeak, composeSpeech, fakeTranscriber, fakeChat, startVoiceBot, servePageFor, launchWithFakeMic,
} from "../lib/voice.mjs";

const QUESTION = "What is the weather like in Paris today?";
// No commas: a pause at a comma outlasts the VAD's stop delay and would cut
// the utterance into several transcriptions.
const BARGE_IN = "Hold on and tell me about the weather in Rome instead";
// LONG_ANSWER takes espeak-ng about twenty seconds to say, so the bot is
// still talking when the second utterance comes.
const LONG_ANSWER = "The weather in Paris today is mild and mostly sunny, with a light breeze from the west. " +
  "In the morning, the temperature is around twelve degrees, rising to about eighteen in the afternoon. " +
  "There is a small chance of rain in the evening, so an umbrella would not hurt. " +
  "Tomorrow looks much the same, a little warmer, with clouds coming in late at night.";
const SHORT_ANSWER = "Rome is warm and sunny today.";

// The fake microphone's script, in seconds. LEAD covers the connection and
// the bot's greeting; GAP is the pause after the question, in which the bot
// starts its answer (VAD stop 0.2 s + turn timeout 0.6 s + synthesis), and
// which is then about two seconds into it.
const LEAD = 4.5;
const GAP = 3.0;

// What the bot's pipeline adds around an utterance it transcribes: the
// segmented STT keeps a second from before the VAD's start, and the VAD
// waits 0.2 s of silence before it stops.
const PRE_SPEECH = 1.0;
const VAD_STOP = 0.2;
const VAD_START_MS = 200;

// Meter thresholds (RMS of full scale per 10 ms block).
const LOUD = 0.01; // speech: espeak-ng through Opus is around 0.05 to 0.2
const QUIET = 0.002; // silence decodes to near zero
const SILENT_RUN_MS = 700; // a stop, not a pause between words

const BARGE_IN_LIMIT_MS = 300;
const TIMEOUT = 40000;
const espeak = hasEspeak();

let stt, chat, bot, site, browser, speech;
let record; // what the page saw: {blocks, events, offsetMs, stats}

before(async () => {
  if (!espeak) return;
  speech = composeSpeech([{ silence: LEAD }, { say: QUESTION }, { silence: GAP }, { say: BARGE_IN }, { silence: 2 }]);
  const said = [QUESTION, BARGE_IN];
  stt = await fakeTranscriber((_, i) => said[i] ?? "");
  chat = await fakeChat((_, i) => (i === 0 ? LONG_ANSWER : SHORT_ANSWER));
  bot = await startVoiceBot({ STT_BASE_URL: stt.url, OPENAI_BASE_URL: chat.url, OPENAI_MODEL: "fake-model" });
  site = await servePageFor(bot.url);
  browser = await launchWithFakeMic(speech.path);
  const target = new Target(browser, site.url, site.url);
  const page = await target.open();
  try {
    const ready = await target.connect(page, { mic: true });
    assert.equal(ready.version, "2.1.0");
    await page.addScriptTag({ path: join(e2eDir, "src/voice.js") });
    await page.evaluate(() => window.__voice.start());
    // The script ends with the bot's answer to the second utterance.
    await page.waitForFunction(() => {
      const types = window.__voice.events.map((e) => e.type);
      const second = types.indexOf("user-started-speaking", types.indexOf("user-started-speaking") + 1);
      const answer = second < 0 ? -1 : types.indexOf("bot-started-speaking", second);
      return answer >= 0 && types.indexOf("bot-stopped-speaking", answer) >= 0;
    }, null, { timeout: TIMEOUT }).catch(async (e) => {
      const types = await page.evaluate(() => window.__voice.events.map((e) => e.type).filter((t) => !/metrics|llm-text/.test(t)));
      throw new Error(`${e.message}\nRTVI messages: ${types.join(" ")}\nuploads: ${JSON.stringify(stt.uploads)}\nbot log:\n${bot.log.slice(-30).join("\n")}`);
    });
    record = await page.evaluate(async () => ({
      blocks: window.__voice.blocks,
      events: window.__voice.events.map(({ type, at, data }) => ({ type, at, data })),
      offsetMs: window.__voice.offsetMs,
      stats: await window.__voice.inboundEnergy(),
      series: window.__voice.stats,
    }));
  } finally {
    await closePage(page);
  }
});

after(async () => {
  await browser?.close();
  await bot?.stop();
  await site?.close();
  await stt?.close();
  await chat?.close();
});

// segments finds the runs of blocks louder than LOUD, merging gaps of up to
// mergeMs (pauses between words).
function segments(blocks, mergeMs) {
  const out = [];
  for (const b of blocks) {
    if (b.rms < LOUD) continue;
    const t = b.t * 1000;
    const last = out[out.length - 1];
    if (last && t - last.end <= mergeMs) last.end = t + 10;
    else out.push({ start: t, end: t + 10 });
  }
  return out;
}

// silentFrom returns when the first run of blocks quieter than QUIET that
// lasts SILENT_RUN_MS begins, looking from fromMs on.
function silentFrom(blocks, fromMs) {
  let runStart = null;
  for (const b of blocks) {
    const t = b.t * 1000;
    if (t < fromMs) continue;
    if (b.rms < QUIET) {
      runStart ??= t;
      if (t + 10 - runStart >= SILENT_RUN_MS) return runStart;
    } else {
      runStart = null;
    }
  }
  return null;
}

// rms is the root mean square over the blocks between from and to.
function rms(blocks, from, to) {
  const inside = blocks.filter((b) => b.t * 1000 >= from && b.t * 1000 < to);
  return { rms: Math.sqrt(inside.reduce((s, b) => s + b.rms * b.rms, 0) / inside.length), blocks: inside.length, loud: inside.filter((b) => b.rms >= LOUD).length };
}

const dBFS = (x) => 20 * Math.log10(x);
const round = (x) => Math.round(x);

// the RTVI messages of a type, with their time on the audio clock.
function messages(type) {
  return record.events.filter((e) => e.type === type).map((e) => ({ ...e, t: e.at - record.offsetMs }));
}

// jitterBufferMs is the browser's average jitter buffer delay for the audio
// it played in the second before perf time at (getStats counters).
function jitterBufferMs(at) {
  const inside = record.series.filter((s) => s.at <= at && s.at >= at - 1000);
  if (inside.length < 2) return null;
  const a = inside[0], b = inside[inside.length - 1];
  const n = b.jitterBufferEmittedCount - a.jitterBufferEmittedCount;
  return n > 0 ? round(((b.jitterBufferDelay - a.jitterBufferDelay) / n) * 1000) : null;
}

// timeline locates the script in the record: the two utterances as the
// microphone played them, the bot's answer they interrupt, and when it
// went quiet.
function timeline() {
  const mic = segments(record.blocks.mic, 400);
  const bot = segments(record.blocks.bot, 300);
  const [question, bargeIn] = mic;
  const answer = bargeIn && bot.find((s) => s.start < bargeIn.start && s.end > bargeIn.start);
  const vadStart = bargeIn && messages("user-started-speaking").find((m) => m.t > bargeIn.start);
  const botStop = bargeIn && silentFrom(record.blocks.bot, bargeIn.start);
  // The output transport says bot-stopped-speaking as it drops its queue.
  const serverStop = vadStart && messages("bot-stopped-speaking").find((m) => m.t >= vadStart.t);
  return { mic, bot, question, bargeIn, answer, vadStart, botStop, serverStop };
}

describe("a spoken conversation with examples/voice-bot", { skip: !espeak && "espeak-ng is not installed" }, () => {
  // The microphone plays the file once (%noloop); were it to loop, the
  // question would come again only after LEAD seconds of silence, past the
  // end of the record.
  it("the fake microphone plays the script: the question, the pause, then the barge-in", () => {
    const { mic } = timeline();
    assert.equal(mic.length, 2, `speech at the microphone: ${JSON.stringify(mic)}`);
    mic.forEach((seg, i) => {
      const want = speech.utterances[i].seconds * 1000;
      assert.ok(Math.abs(seg.end - seg.start - want) < 200, `utterance ${i} lasted ${round(seg.end - seg.start)} ms at the microphone, the WAV has ${round(want)} ms`);
    });
    const gap = mic[1].start - mic[0].end;
    assert.ok(Math.abs(gap - GAP * 1000) < 200, `the pause between them was ${round(gap)} ms, the WAV has ${GAP * 1000} ms`);
  });

  it("the transcription server gets each utterance whole, about as long as it was said", () => {
    assert.equal(stt.uploads.length, 2, `uploads: ${JSON.stringify(stt.uploads)}`);
    stt.uploads.forEach((u, i) => {
      const said = speech.utterances[i].seconds;
      assert.equal(u.rate, 16000);
      assert.equal(u.channels, 1);
      // At least the speech; at most the speech with the kept lead-in, the
      // VAD's stop delay and a little jitter.
      assert.ok(u.seconds >= said && u.seconds <= said + PRE_SPEECH + VAD_STOP + 0.3,
        `upload ${i} has ${u.seconds.toFixed(2)} s of audio for ${said.toFixed(2)} s of speech`);
    });
  });

  it("the model is asked with the transcript, and after the barge-in without the unspoken answer", () => {
    assert.equal(chat.requests.length, 2, `${chat.requests.length} chat requests`);
    const [first, second] = chat.requests.map((r) => r.messages);
    assert.deepEqual(first.at(-1), { role: "user", content: QUESTION });
    assert.deepEqual(second.at(-1), { role: "user", content: BARGE_IN });
    // The context keeps what the bot said (the output transport releases a
    // sentence's text once its audio has played): the barge-in came during
    // the first sentence, so none of the answer was said in full.
    const afterQuestion = second.slice(second.findIndex((m) => m.content === QUESTION) + 1, -1);
    for (const m of afterQuestion) {
      assert.ok(m.role === "assistant" && LONG_ANSWER.startsWith(m.content.replace(/\s*$/, "")) && !m.content.includes("Tomorrow"),
        `the context holds unspoken text: ${JSON.stringify(m)}`);
    }
  });

  it("the bot's answer arrives as real audio energy on its track", () => {
    const { answer, bargeIn } = timeline();
    assert.ok(answer, `no bot audio overlapping the barge-in at ${bargeIn?.start}`);
    const e = rms(record.blocks.bot, answer.start, bargeIn.start);
    assert.ok(e.rms > 0.03, `the answer's RMS is ${e.rms.toFixed(4)} (${dBFS(e.rms).toFixed(1)} dBFS)`);
    assert.ok(e.loud / e.blocks > 0.6, `${e.loud} of ${e.blocks} blocks of the answer are speech`);
    assert.ok(record.stats.totalAudioEnergy > 0, `getStats: ${JSON.stringify(record.stats)}`);
  });

  it(`talking over the bot stops its audio within ${BARGE_IN_LIMIT_MS} ms`, () => {
    const { answer, question, bargeIn, vadStart, botStop, bot, serverStop } = timeline();
    assert.ok(answer && answer.start < bargeIn.start - 1000, "the bot had been talking for a second when interrupted");
    assert.ok(vadStart, "the server reported the user's second turn (user-started-speaking)");
    assert.ok(botStop !== null, "the bot's audio went quiet after the barge-in");
    const fromVAD = botStop - vadStart.t;
    const fromMic = botStop - bargeIn.start;
    const report = {
      bargeInFromVADms: round(fromVAD),
      bargeInFromSpeechOnsetMs: round(fromMic),
      vadDetectedAfterOnsetMs: round(vadStart.t - bargeIn.start),
      // Of bargeInFromVADms: the server's interruption until its output
      // dropped the queue (bot-stopped-speaking), then the audio already on
      // its way: the network and the browser's jitter buffer.
      serverDropMs: serverStop ? round(serverStop.t - vadStart.t) : null,
      inFlightMs: serverStop ? round(botStop - serverStop.t) : null,
      jitterBufferMs: jitterBufferMs(vadStart.at),
      answerRMSdBFS: +dBFS(rms(record.blocks.bot, answer.start, bargeIn.start).rms).toFixed(1),
      answerPlayedMs: round(botStop - answer.start),
      // End of the question at the microphone to the answer's first sound,
      // everything included: WebRTC both ways, the VAD's stop delay, the
      // 600 ms turn timeout, loopback HTTP to the fakes, espeak-ng.
      questionToAnswerMs: round(answer.start - question.end),
      answerLength: LONG_ANSWER.length,
      inbound: record.stats,
      mic: timeline().mic.map((s) => [round(s.start), round(s.end)]),
      bot: bot.map((s) => [round(s.start), round(s.end)]),
      uploads: stt.uploads.map((u) => u.seconds),
    };
    console.log(`voice e2e: ${JSON.stringify(report)}`);
    writeFileSync(join(e2eDir, "dist", "voice-report.json"), JSON.stringify(report, null, 2) + "\n");
    const breakdown = `server ${report.serverDropMs} ms, in flight ${report.inFlightMs} ms (jitter buffer ${report.jitterBufferMs} ms)`;
    // The audio stops after the server heard the user, and within the limit.
    assert.ok(fromVAD >= 0, `the bot went quiet ${round(-fromVAD)} ms before the server reported the user: not the barge-in`);
    assert.ok(fromVAD < BARGE_IN_LIMIT_MS,
      `the bot's audio stopped ${round(fromVAD)} ms after the server's VAD detected the user (limit ${BARGE_IN_LIMIT_MS} ms): ${breakdown}`);
    // The server's share: its output drops the queued answer at once.
    assert.ok(serverStop && serverStop.t - vadStart.t < 100, `the output dropped its queue ${report.serverDropMs} ms after the user's turn began`);
    // The VAD's start delay comes before: from the first sound of the
    // interruption it is VAD_START_MS more (reported, with the uplink).
    assert.ok(fromMic > VAD_START_MS, `the bot went quiet ${round(fromMic)} ms after the user's first sound, before the VAD could decide`);
  });

  it("the bot answers the barge-in, out loud", () => {
    const { bot, botStop } = timeline();
    const next = bot.find((s) => s.start > botStop);
    assert.ok(next, `no bot audio after the barge-in: ${JSON.stringify(bot)}`);
    assert.ok(messages("bot-output").some((m) => m.t > botStop && m.data?.text?.includes("Rome")), "bot-output says the short answer");
  });
});
