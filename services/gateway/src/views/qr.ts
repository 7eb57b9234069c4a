import QRCode from "qrcode";

/**
 * A face URL as an SVG QR code, for a phone to scan (the desktop handoff).
 * Error correction M; a quiet zone of four modules, as the standard asks.
 */
export function qrSvg(url: string): Promise<string> {
  return QRCode.toString(url, { type: "svg", errorCorrectionLevel: "M", margin: 4 });
}
