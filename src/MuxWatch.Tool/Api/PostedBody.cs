using System.Buffers;
using System.Text;
using Microsoft.Net.Http.Headers;

namespace MuxWatch.Tool.Api;

/// <summary>
/// A <c>POST /api/timeouts</c> body from the wire to text: which form its content type declares, its
/// bytes read up to a limit, and those bytes decoded as strict UTF-8 text (no NUL, no byte-order mark).
/// </summary>
internal static class PostedBody
{
    private const char ByteOrderMark = '\uFEFF';

    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    /// <summary>
    /// text/* is one message; JSON, NDJSON and JSON-lines types are lines; no type at all is sniffed
    /// (<paramref name="jsonLines"/> null: a body starting with '{' is JSON lines). Anything else (an image, a form) is refused.
    /// </summary>
    public static bool TryChooseForm(string? contentType, out bool? jsonLines)
    {
        jsonLines = null;
        if (string.IsNullOrWhiteSpace(contentType))
        {
            return true;
        }

        if (!MediaTypeHeaderValue.TryParse(contentType, out var media) || media.MediaType.Value is not { } type)
        {
            return false;
        }

        if (type.StartsWith("text/", StringComparison.OrdinalIgnoreCase))
        {
            jsonLines = false;
            return true;
        }

        if (type.Equals("application/json", StringComparison.OrdinalIgnoreCase)
            || type.Equals("application/x-ndjson", StringComparison.OrdinalIgnoreCase)
            || type.Equals("application/ndjson", StringComparison.OrdinalIgnoreCase)
            || type.Equals("application/jsonl", StringComparison.OrdinalIgnoreCase)
            || type.Equals("application/x-jsonlines", StringComparison.OrdinalIgnoreCase)
            || type.EndsWith("+json", StringComparison.OrdinalIgnoreCase))
        {
            jsonLines = true;
            return true;
        }

        return false;
    }

    /// <summary>Reads at most <paramref name="limit"/> bytes; null when the body is longer.</summary>
    public static async Task<byte[]?> ReadBoundedAsync(Stream body, int limit, CancellationToken cancellationToken)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(64 * 1024);
        try
        {
            using var collected = new MemoryStream();
            int read;
            while ((read = await body.ReadAsync(buffer, cancellationToken).ConfigureAwait(false)) > 0)
            {
                if (collected.Length + read > limit)
                {
                    return null;
                }

                collected.Write(buffer, 0, read);
            }

            return collected.ToArray();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>The body as text, or the reason it is not text (invalid UTF-8, or binary with NUL characters).</summary>
    public static bool TryDecode(byte[] body, out string text, out string problem)
    {
        problem = string.Empty;
        try
        {
            text = StrictUtf8.GetString(body);
        }
        catch (DecoderFallbackException)
        {
            text = string.Empty;
            problem = "the body is not UTF-8 text";
            return false;
        }

        text = text.TrimStart(ByteOrderMark); // an editor's or a shipper's BOM is not part of the first line
        if (text.Contains('\0', StringComparison.Ordinal))
        {
            problem = "the body is binary (it contains NUL characters), not text";
            return false;
        }

        return true;
    }

    /// <summary>A line without the byte-order mark an editor or a shipper may put before it.</summary>
    public static string WithoutByteOrderMark(string line) => line.TrimStart(ByteOrderMark);
}
