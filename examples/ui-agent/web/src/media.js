// DemoMediaManager is the page's media manager for SmallWebRTCTransport.
//
// The transport's default manager loads daily-js's call machine from a CDN
// when it initialises, which hangs offline, and the
// package's WavMediaManager asks for the microphone as soon as the page
// connects. This one connects with no media at all, so the demo works as a
// text chat with no permission prompt, and only asks for the microphone
// when the user presses the mic button; the track then replaces the empty
// sender of the audio transceiver, so no renegotiation is needed.
export class DemoMediaManager {
  constructor() {
    this._callbacks = {};
    this._options = undefined;
    this._stream = null;
    this._micEnabled = false;
    this._transport = null;
    this.supportsScreenShare = false;
  }

  // attach gives the manager the transport whose audio sender it feeds.
  attach(transport) {
    this._transport = transport;
  }

  setUserAudioCallback() {}

  setClientOptions(options, override = false) {
    if (this._options && !override) return;
    this._options = options;
    this._callbacks = options.callbacks ?? {};
  }

  async initialize() {}
  async connect() {}

  async disconnect() {
    if (this._stream) {
      this._stream.getTracks().forEach((t) => t.stop());
      this._stream = null;
    }
    this._micEnabled = false;
  }

  tracks() {
    const audio = this._stream?.getAudioTracks()[0];
    return { local: audio ? { audio } : {} };
  }

  // enableMic turns the microphone on (asking for it the first time) or
  // off. It rejects when the browser refuses the microphone.
  async enableMic(enable) {
    if (enable && !this._stream) {
      this._stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
      });
      const track = this._stream.getAudioTracks()[0];
      const sender = this._transport?.getAudioTransceiver?.()?.sender;
      if (sender && track) await sender.replaceTrack(track);
      if (track) this._callbacks.onTrackStarted?.(track, { id: "local", name: "", local: true });
    }
    this._micEnabled = enable;
    this._stream?.getAudioTracks().forEach((t) => {
      t.enabled = enable;
    });
  }

  enableCam() {}
  enableScreenShare() {}
  async getAllMics() {
    return [];
  }
  async getAllCams() {
    return [];
  }
  async getAllSpeakers() {
    return [];
  }
  updateMic() {}
  updateCam() {}
  updateSpeaker() {}
  userStartedSpeaking() {}
  bufferBotAudio() {}

  get selectedMic() {
    return {};
  }
  get selectedCam() {
    return {};
  }
  get selectedSpeaker() {
    return {};
  }
  get isMicEnabled() {
    return this._micEnabled;
  }
  get isCamEnabled() {
    return false;
  }
  get isSharingScreen() {
    return false;
  }
}
