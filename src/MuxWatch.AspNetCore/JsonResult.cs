using System.Buffers;
using System.Text.Json;
using Microsoft.AspNetCore.Http;
using MuxWatch.Timeouts;

namespace MuxWatch.AspNetCore;

/// <summary>A JSON answer written with <see cref="Utf8JsonWriter"/>, so field values keep their JSON types exactly.</summary>
internal sealed class JsonResult(ReadOnlyMemory<byte> body, int status) : IResult
{
    /// <summary>The HTTP status this answer is sent with.</summary>
    public int Status => status;

    public static JsonResult Of(Action<Utf8JsonWriter> write, int status = StatusCodes.Status200OK)
    {
        var buffer = new ArrayBufferWriter<byte>();
        using (var writer = new Utf8JsonWriter(buffer, TimeoutJson.WriterOptions))
        {
            write(writer);
        }

        return new JsonResult(buffer.WrittenMemory, status);
    }

    /// <summary><c>{"error": reason}</c> with a 4xx status.</summary>
    public static JsonResult Error(int status, string reason) =>
        Of(writer =>
        {
            writer.WriteStartObject();
            writer.WriteString("error", reason);
            writer.WriteEndObject();
        }, status);

    public async Task ExecuteAsync(HttpContext httpContext)
    {
        httpContext.Response.StatusCode = status;
        httpContext.Response.ContentType = "application/json; charset=utf-8";
        httpContext.Response.ContentLength = body.Length;
        await httpContext.Response.Body.WriteAsync(body, httpContext.RequestAborted).ConfigureAwait(false);
    }
}
