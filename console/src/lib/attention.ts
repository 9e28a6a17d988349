/**
 * Getting a person's attention when a visitor starts waiting: a browser notification and a short
 * chime, each only if the person turned it on here (and, for notifications, the browser allows
 * it). The choices are remembered per browser.
 */
import { signal } from "@preact/signals";

const PREFERENCES_KEY = "console.alerts";

export interface AlertPreferences {
  notify: boolean;
  sound: boolean;
}

function stored(): AlertPreferences {
  try {
    const found = JSON.parse(localStorage.getItem(PREFERENCES_KEY) ?? "{}") as Partial<AlertPreferences>;
    return { notify: found.notify === true, sound: found.sound === true };
  } catch {
    return { notify: false, sound: false };
  }
}

export const alertPreferences = signal<AlertPreferences>(stored());

export const notificationsSupported = typeof window !== "undefined" && "Notification" in window;

/** The browser's answer for notifications: `default` (not asked yet), `granted` or `denied`. */
export const notificationPermission = signal<NotificationPermission | "unsupported">(
  notificationsSupported ? Notification.permission : "unsupported",
);

function save(next: AlertPreferences): void {
  alertPreferences.value = next;
  localStorage.setItem(PREFERENCES_KEY, JSON.stringify(next));
}

/** Turns notifications on (asking the browser first, from the person's click) or off. */
export async function setNotify(on: boolean): Promise<void> {
  if (on && notificationsSupported && Notification.permission !== "granted") {
    notificationPermission.value = await Notification.requestPermission();
  }
  const allowed = notificationsSupported && Notification.permission === "granted";
  save({ ...alertPreferences.value, notify: on && allowed });
}

/** Turns the chime on or off; turning it on plays it once, so the person hears what it sounds like. */
export function setSound(on: boolean): void {
  save({ ...alertPreferences.value, sound: on });
  if (on) chime();
}

let audio: AudioContext | undefined;

/**
 * Browsers let a page make sound only after the person interacted with it: the audio context is
 * made (or resumed) on a click, so a chime later, from a timer, is allowed.
 */
function unlockAudio(): void {
  if (!alertPreferences.value.sound) return;
  audio ??= new AudioContext();
  if (audio.state === "suspended") void audio.resume();
}
if (typeof window !== "undefined") addEventListener("pointerdown", unlockAudio, { capture: true });

/** Two short tones, synthesized: no sound file to download. */
export function chime(): void {
  audio ??= new AudioContext();
  const context = audio;
  if (context.state === "suspended") void context.resume();
  const start = context.currentTime + 0.01;
  for (const [offset, frequency] of [
    [0, 880],
    [0.16, 1318.5],
  ] as const) {
    const tone = context.createOscillator();
    const volume = context.createGain();
    tone.type = "sine";
    tone.frequency.value = frequency;
    volume.gain.setValueAtTime(0.0001, start + offset);
    volume.gain.exponentialRampToValueAtTime(0.2, start + offset + 0.02);
    volume.gain.exponentialRampToValueAtTime(0.0001, start + offset + 0.28);
    tone.connect(volume).connect(context.destination);
    tone.start(start + offset);
    tone.stop(start + offset + 0.3);
  }
}

/** Tells the person, the ways they chose; `open` runs when they click the notification. */
export function alertPerson(message: { title: string; body: string; tag: string; open: () => void }): void {
  const { notify, sound } = alertPreferences.value;
  if (notify && notificationsSupported && Notification.permission === "granted") {
    const shown = new Notification(message.title, { body: message.body, tag: message.tag });
    shown.onclick = () => {
      window.focus();
      message.open();
      shown.close();
    };
  }
  if (sound) chime();
}
