using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Options;
using Microsoft.Net.Http.Headers;
using MuxWatch.AspNetCore;
using MuxWatch.Hosting;
using MuxWatch.Json;
using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.Reading;

namespace MuxWatch.Service.Api;

/// <summary>
/// <c>GET /api/timeouts</c> lists the recent timeouts, newest first; <c>POST /api/timeouts</c> takes
/// messages from apps or log shippers and answers each one's diagnosis.
/// </summary>
/// <remarks>
/// A POST body is one raw message as text, or JSON lines each with a <c>message</c> string and an
/// optional <c>time</c> (ISO 8601 or unix seconds). A body that is empty, too large, not UTF-8 text,
/// or holds no readable message gets a 4xx naming the reason, and nothing is recorded.
/// </remarks>
internal static partial class TimeoutsApi
{
    /// <summary>Lines answered with their whole diagnosis when <c>?details=true</c>; the rest get a summary.</summary>
    internal const int MaxDetailedResults = 100;

    private const char ByteOrderMark = '\uFEFF';

    private const int MaxJsonDepth = 8;
    private const string PostPolicy = "muxwatch-post";
    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    public static IServiceCollection AddTimeoutsApi(this IServiceCollection services)
    {
        const string section = ApiOptions.SectionName;
        services.AddOptions<ApiOptions>()
            .BindConfiguration(section)
            .Validate(o => o.MaxBodyBytes is >= 1024 and <= 64 * 1024 * 1024,
                $"{section}:{nameof(ApiOptions.MaxBodyBytes)} must be between 1024 and 67108864.")
            .Validate(o => o.MaxMessagesPerRequest is >= 1 and <= 1_000_000,
                $"{section}:{nameof(ApiOptions.MaxMessagesPerRequest)} must be between 1 and 1000000.")
            .Validate(o => o.MaxConcurrentPosts is >= 1 and <= 1024,
                $"{section}:{nameof(ApiOptions.MaxConcurrentPosts)} must be between 1 and 1024.")
            .Validate(o => string.IsNullOrEmpty(o.BearerToken) || o.BearerToken.Length >= 16,
                $"{section}:{nameof(ApiOptions.BearerToken)} must be at least 16 characters when set (its value is not shown).")
            .Validate(o => string.IsNullOrEmpty(o.BearerToken) || o.BearerToken.Trim().Length == o.BearerToken.Length,
                $"{section}:{nameof(ApiOptions.BearerToken)} must not start or end with whitespace: it is compared exactly (its value is not shown).")
            .Validate(o => o.BodyReadTimeout >= TimeSpan.FromSeconds(1) && o.BodyReadTimeout <= TimeSpan.FromMinutes(5),
                $"{section}:{nameof(ApiOptions.BodyReadTimeout)} must be between 00:00:01 and 00:05:00.")
            .Validate(o => o.Port is null or (>= 1 and <= 65535), $"{section}:{nameof(ApiOptions.Port)} must be a port number (1 to 65535).")
            .Validate(o => o.MaxConnections is >= 10 and <= 100_000,
                $"{section}:{nameof(ApiOptions.MaxConnections)} must be between 10 and 100000.")
            .ValidateOnStart();
        services.AddSingleton<ApiStatistics>();
        services.AddSingleton<IMuxWatchStatusSection>(sp => sp.GetRequiredService<ApiStatistics>());
        services.AddSingleton<PostGate>();

        // A backstop only: a body is given BodyReadTimeout to arrive (answered 408), far less than this.
        services.AddRequestTimeouts(options => options.AddPolicy(PostPolicy, TimeSpan.FromSeconds(30)));
        return services;
    }

    public static IEndpointRouteBuilder MapTimeoutsApi(this IEndpointRouteBuilder endpoints)
    {
        // GET /api/timeouts and /api/status are MuxWatch's own endpoints, as an app serves them in-process;
        // the sidecar adds POST, and the token guards the whole group.
        var api = endpoints.MapMuxWatchApi("/api").AddEndpointFilter<BearerTokenFilter>();
        api.MapPost("/timeouts", PostAsync).WithRequestTimeout(PostPolicy);
        if (endpoints.ServiceProvider.GetRequiredService<IOptions<ApiOptions>>().Value.Port is { } port)
        {
            api.RequireHost($"*:{port}"); // the API on a port of its own, e.g. one a network policy keeps private
        }

        return endpoints;
    }

    private static async Task<IResult> PostAsync(
        HttpRequest request,
        TimeoutPipeline pipeline,
        TimeProvider time,
        IOptions<ApiOptions> options,
        ApiStatistics statistics,
        PostGate gate,
        ILogger<ApiStatistics> logger,
        bool? details,
        CancellationToken cancellationToken)
    {
        PostOutcome answer;
        try
        {
            answer = await AnswerPostAsync(request, pipeline, time, options.Value, gate, details ?? false, cancellationToken).ConfigureAwait(false);
        }
        catch (Microsoft.AspNetCore.Http.BadHttpRequestException ex) when (ex.StatusCode is StatusCodes.Status408RequestTimeout or StatusCodes.Status413PayloadTooLarge)
        {
            // Kestrel ended the body itself (below its minimum data rate): answered and counted like ours.
            answer = PostOutcome.Refused(ex.StatusCode, ex.StatusCode == StatusCodes.Status408RequestTimeout
                ? "the body arrived more slowly than the server's minimum data rate"
                : "the body is larger than the server accepts");
        }
        catch (Exception ex) when (ex is IOException or Microsoft.AspNetCore.Http.BadHttpRequestException || (ex is OperationCanceledException && cancellationToken.IsCancellationRequested))
        {
            // The client went away mid-upload (a body cut short is Kestrel's "unexpected end of request
            // content"): expected, one line, no stack trace.
            statistics.CountAborted();
            var reason = ex.GetType().Name;
            LogAborted(logger, reason);
            return Results.Empty;
        }

        if (answer.Status >= 400)
        {
            statistics.CountRefusal(answer.Status);
            if (answer.Status == StatusCodes.Status429TooManyRequests)
            {
                request.HttpContext.Response.Headers.RetryAfter = "1";
            }
        }

        return answer.Body is ProblemAnswer problem
            ? Problems.Result(problem)
            : Results.Json(answer.Body, ServiceJson.Options.GetTypeInfo(answer.Body.GetType()), statusCode: answer.Status);
    }

    private static async Task<PostOutcome> AnswerPostAsync(
        HttpRequest request,
        TimeoutPipeline pipeline,
        TimeProvider time,
        ApiOptions limits,
        PostGate gate,
        bool details,
        CancellationToken cancellationToken)
    {
        if (!TryChooseForm(request.ContentType, out var declaredJsonLines))
        {
            return PostOutcome.Refused(StatusCodes.Status415UnsupportedMediaType,
                $"the content type '{request.ContentType}' is not accepted: send text/plain (one message) or application/x-ndjson (JSON lines)");
        }

        if (request.ContentLength > limits.MaxBodyBytes)
        {
            return PostOutcome.Refused(StatusCodes.Status413PayloadTooLarge, $"the body is larger than {limits.MaxBodyBytes} bytes");
        }

        using var reading = gate.Reading.AttemptAcquire();
        if (!reading.IsAcquired)
        {
            return PostOutcome.Refused(StatusCodes.Status429TooManyRequests, "too many bodies are being read at once; try again in a second");
        }

        // Kestrel's own body limit (30 MB by default) must never answer first: MuxWatch's limit is the one.
        if (request.HttpContext.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } bodySize)
        {
            bodySize.MaxRequestBodySize = limits.MaxBodyBytes + 1L;
        }

        byte[]? body;
        using (var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
        {
            deadline.CancelAfter(limits.BodyReadTimeout);
            try
            {
                body = await ReadBoundedAsync(request.Body, limits.MaxBodyBytes, deadline.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                return PostOutcome.Refused(StatusCodes.Status408RequestTimeout, $"the body did not arrive within {limits.BodyReadTimeout.TotalSeconds:0} s");
            }
        }

        if (body is null)
        {
            return PostOutcome.Refused(StatusCodes.Status413PayloadTooLarge, $"the body is larger than {limits.MaxBodyBytes} bytes");
        }

        // The processing permit is taken only now that the body is in, and given back before the answer is sent.
        RateLimitLease processing;
        using (var wait = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
        {
            wait.CancelAfter(PostGate.ProcessingWait);
            try
            {
                processing = await gate.Processing.AcquireAsync(1, wait.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                return PostOutcome.Refused(StatusCodes.Status429TooManyRequests, $"more than {limits.MaxConcurrentPosts} posts are being processed; try again in a second");
            }
        }

        using var processingLease = processing;
        if (!processing.IsAcquired)
        {
            return PostOutcome.Refused(StatusCodes.Status429TooManyRequests, $"more than {limits.MaxConcurrentPosts} posts are being processed; try again in a second");
        }

        return Answer(body, declaredJsonLines, pipeline, time, limits, details);
    }

    private static PostOutcome Answer(byte[] body, bool? declaredJsonLines, TimeoutPipeline pipeline, TimeProvider time, ApiOptions limits, bool details)
    {
        string text;
        try
        {
            text = StrictUtf8.GetString(body);
        }
        catch (DecoderFallbackException)
        {
            return PostOutcome.Refused(StatusCodes.Status415UnsupportedMediaType, "the body is not UTF-8 text");
        }

        text = text.TrimStart(ByteOrderMark); // an editor's or a shipper's BOM is not part of the first line
        if (text.Contains('\0', StringComparison.Ordinal))
        {
            return PostOutcome.Refused(StatusCodes.Status415UnsupportedMediaType, "the body is binary (it contains NUL characters), not text");
        }

        if (string.IsNullOrWhiteSpace(text))
        {
            return PostOutcome.Refused(StatusCodes.Status400BadRequest, "the body is empty: send one message as text, or JSON lines with a \"message\" string");
        }

        var now = time.GetUtcNow();
        var isJsonLines = declaredJsonLines ?? text.AsSpan().TrimStart().StartsWith("{", StringComparison.Ordinal);
        if (!isJsonLines)
        {
            // Read here to refuse what is not a Redis message; the pipeline's read step takes the same report.
            var posted = RedisMessage.FromText(text);
            if (!LooksLikeRedisMessage(posted.Read()))
            {
                return PostOutcome.Refused(StatusCodes.Status422UnprocessableEntity, "the text is not a StackExchange.Redis timeout or connection message");
            }

            var observed = pipeline.Submit(new TimeoutObservation(now, TimeoutSources.Api, posted));
            return PostOutcome.Answered([TimeoutAnswer.From(observed)]); // one message: its whole diagnosis
        }

        var lines = text.Split('\n');
        var messageCount = lines.Count(line => !string.IsNullOrWhiteSpace(line));
        if (messageCount > limits.MaxMessagesPerRequest)
        {
            return PostOutcome.Refused(StatusCodes.Status413PayloadTooLarge, $"the body holds {messageCount} lines; at most {limits.MaxMessagesPerRequest} are accepted per request");
        }

        var results = new List<object>(messageCount);
        var detailed = 0;
        for (var i = 0; i < lines.Length; i++)
        {
            if (string.IsNullOrWhiteSpace(lines[i]))
            {
                continue;
            }

            if (!TryReadLine(lines[i].TrimStart(ByteOrderMark), now, out var message, out var reportedAt, out var error))
            {
                results.Add(new LineErrorAnswer(i + 1, SecretRedactor.Redact(error)));
                continue;
            }

            var line = RedisMessage.FromText(message);
            if (!LooksLikeRedisMessage(line.Read()))
            {
                results.Add(new LineErrorAnswer(i + 1, "the message is not a StackExchange.Redis timeout or connection message"));
                continue;
            }

            // The answer stays about as large as the body: a summary per line, the whole diagnosis on
            // request (?details=true) for the first MaxDetailedResults lines.
            var observed = pipeline.Submit(new TimeoutObservation(reportedAt, TimeoutSources.Api, line));
            results.Add(details && detailed++ < MaxDetailedResults ? TimeoutAnswer.From(observed) : LineSummaryAnswer.From(i + 1, observed));
        }

        return PostOutcome.Answered(results);
    }

    /// <summary>
    /// text/* is one message; JSON, NDJSON and JSON-lines types are lines; no type at all is sniffed
    /// (a body starting with '{' is JSON lines). Anything else (an image, a form) is refused.
    /// </summary>
    private static bool TryChooseForm(string? contentType, out bool? jsonLines)
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

    [LoggerMessage(EventId = 30, Level = LogLevel.Debug, Message = "A POST to /api/timeouts ended before its body arrived ({Reason}): the client went away")]
    private static partial void LogAborted(ILogger logger, string reason);

    /// <summary>Fields a message without a known header must carry to count: <c>qs: 1</c> alone is not a Redis message.</summary>
    internal const int MinimumFieldsWithoutHeader = 3;

    /// <summary>
    /// A report counts as a Redis message when it has a known header (a timeout, backlog or connection
    /// message), or, without one (a message pasted from its middle), at least
    /// <see cref="MinimumFieldsWithoutHeader"/> fields the client writes.
    /// </summary>
    private static bool LooksLikeRedisMessage(RedisErrorReport report) =>
        report.Kind != RedisErrorKind.Unknown || report.Fields.Count(field => FieldGlossary.Knows(field.Key)) >= MinimumFieldsWithoutHeader;

    private static bool TryReadLine(string line, DateTimeOffset now, out string message, out DateTimeOffset time, out string error)
    {
        message = string.Empty;
        time = now;
        error = string.Empty;
        try
        {
            using var document = JsonDocument.Parse(line, new JsonDocumentOptions { MaxDepth = MaxJsonDepth });
            var root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object
                || !root.TryGetProperty("message", out var messageElement)
                || messageElement.ValueKind != JsonValueKind.String
                || string.IsNullOrWhiteSpace(messageElement.GetString()))
            {
                error = "the line has no \"message\" string";
                return false;
            }

            message = messageElement.GetString()!;
            if (root.TryGetProperty("time", out var timeElement) && !TryReadTime(timeElement, now, out time))
            {
                error = "\"time\" is neither an ISO 8601 date nor unix seconds between 2000 and a day from now";
                return false;
            }

            return true;
        }
        catch (JsonException ex)
        {
            error = $"the line is not JSON ({ex.Message})";
            return false;
        }
    }

    private static readonly DateTimeOffset EarliestTime = new(2000, 1, 1, 0, 0, 0, TimeSpan.Zero);

    private static bool TryReadTime(JsonElement element, DateTimeOffset now, out DateTimeOffset time)
    {
        time = default;
        switch (element.ValueKind)
        {
            case JsonValueKind.String:
                return DateTimeOffset.TryParse(element.GetString(), CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out time)
                    && IsSane(time, now);
            case JsonValueKind.Number when element.TryGetDouble(out var seconds) && seconds is > 0 and < 253_402_300_799:
                time = DateTimeOffset.FromUnixTimeMilliseconds((long)(seconds * 1000));
                return IsSane(time, now);
            default:
                return false;
        }
    }

    /// <summary>A reported time MuxWatch can use: from 2000 to a day ahead of its own clock (a skewed shipper, not year 1 or 9999).</summary>
    private static bool IsSane(DateTimeOffset time, DateTimeOffset now) =>
        time >= EarliestTime && time <= now + TimeSpan.FromDays(1);

    /// <summary>Reads at most <paramref name="limit"/> bytes; null when the body is longer.</summary>
    private static async Task<byte[]?> ReadBoundedAsync(Stream body, int limit, CancellationToken cancellationToken)
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

    /// <summary>The status and body of one POST's answer.</summary>
    private sealed record PostOutcome(int Status, object Body)
    {
        public static PostOutcome Refused(int status, string reason) => new(status, Problems.Answer(status, reason));

        /// <summary>200 with one result per message; 400 when no line was usable.</summary>
        public static PostOutcome Answered(IReadOnlyList<object> results)
        {
            var accepted = results.Count(result => result is TimeoutAnswer or LineSummaryAnswer);
            return new PostOutcome(
                accepted == 0 ? StatusCodes.Status400BadRequest : StatusCodes.Status200OK,
                new PostAnswer(accepted, results.Count - accepted, results));
        }
    }
}
