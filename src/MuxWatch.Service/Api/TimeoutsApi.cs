using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Threading.RateLimiting;
using Microsoft.Extensions.Options;
using MuxWatch.Hosting;
using MuxWatch.Json;
using MuxWatch.Pipeline;
using MuxWatch.Timeouts;

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
internal static class TimeoutsApi
{
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
            .Validate(o => string.IsNullOrEmpty(o.BearerToken) || o.BearerToken.Trim().Length >= 16,
                $"{section}:{nameof(ApiOptions.BearerToken)} must be at least 16 characters when set (its value is not shown).")
            .ValidateOnStart();
        services.AddSingleton<ApiStatistics>();
        services.AddSingleton<IMuxWatchStatusSection>(sp => sp.GetRequiredService<ApiStatistics>());

        // A body that drips in slowly must not hold a request open: Kestrel's minimum data rate ends the
        // slowest; this bounds the rest, reading included.
        services.AddRequestTimeouts(options => options.AddPolicy(PostPolicy, TimeSpan.FromSeconds(30)));

        // Posting faster than MuxWatch reads is refused at once (429), never queued: memory stays bounded
        // at MaxConcurrentPosts bodies whatever the rate.
        services.AddRateLimiter(limiter =>
        {
            limiter.RejectionStatusCode = StatusCodes.Status429TooManyRequests;
            limiter.OnRejected = (context, _) =>
            {
                context.HttpContext.RequestServices.GetRequiredService<ApiStatistics>().CountRefusal(StatusCodes.Status429TooManyRequests);
                context.HttpContext.Response.Headers.RetryAfter = "1";
                return ValueTask.CompletedTask;
            };
            limiter.AddPolicy(PostPolicy, context => RateLimitPartition.GetConcurrencyLimiter(
                "posts",
                _ => new ConcurrencyLimiterOptions
                {
                    PermitLimit = context.RequestServices.GetRequiredService<IOptions<ApiOptions>>().Value.MaxConcurrentPosts,
                    QueueLimit = 0,
                }));
        });
        return services;
    }

    public static IEndpointRouteBuilder MapTimeoutsApi(this IEndpointRouteBuilder endpoints)
    {
        // GET /api/timeouts and /api/status are MuxWatch's own endpoints, as an app serves them in-process;
        // the sidecar adds POST, and the token guards the whole group.
        var api = endpoints.MapMuxWatchApi("/api").AddEndpointFilter<BearerTokenFilter>();
        api.MapPost("/timeouts", PostAsync).WithRequestTimeout(PostPolicy).RequireRateLimiting(PostPolicy);
        return endpoints;
    }

    private static async Task<IResult> PostAsync(
        HttpRequest request,
        TimeoutPipeline pipeline,
        TimeProvider time,
        IOptions<ApiOptions> options,
        ApiStatistics statistics,
        CancellationToken cancellationToken)
    {
        var answer = await AnswerPostAsync(request, pipeline, time, options.Value, cancellationToken).ConfigureAwait(false);
        if (answer.Status >= 400)
        {
            statistics.CountRefusal(answer.Status);
        }

        return Results.Json(answer.Body, ServiceJson.Options.GetTypeInfo(answer.Body.GetType()), statusCode: answer.Status);
    }

    private static async Task<PostOutcome> AnswerPostAsync(
        HttpRequest request,
        TimeoutPipeline pipeline,
        TimeProvider time,
        ApiOptions limits,
        CancellationToken cancellationToken)
    {
        if (request.ContentLength > limits.MaxBodyBytes)
        {
            return PostOutcome.Refused(StatusCodes.Status413PayloadTooLarge, $"the body is larger than {limits.MaxBodyBytes} bytes");
        }

        var body = await ReadBoundedAsync(request.Body, limits.MaxBodyBytes, cancellationToken).ConfigureAwait(false);
        if (body is null)
        {
            return PostOutcome.Refused(StatusCodes.Status413PayloadTooLarge, $"the body is larger than {limits.MaxBodyBytes} bytes");
        }

        string text;
        try
        {
            text = StrictUtf8.GetString(body);
        }
        catch (DecoderFallbackException)
        {
            return PostOutcome.Refused(StatusCodes.Status415UnsupportedMediaType, "the body is not UTF-8 text");
        }

        if (text.Contains('\0', StringComparison.Ordinal))
        {
            return PostOutcome.Refused(StatusCodes.Status415UnsupportedMediaType, "the body is binary (it contains NUL characters), not text");
        }

        if (string.IsNullOrWhiteSpace(text))
        {
            return PostOutcome.Refused(StatusCodes.Status400BadRequest, "the body is empty: send one message as text, or JSON lines with a \"message\" string");
        }

        var now = time.GetUtcNow();
        var isJsonLines = request.ContentType?.Contains("json", StringComparison.OrdinalIgnoreCase) == true
            || text.AsSpan().TrimStart().StartsWith("{", StringComparison.Ordinal);
        if (!isJsonLines)
        {
            var report = TimeoutMessageReader.Read(text);
            if (!LooksLikeRedisMessage(report))
            {
                return PostOutcome.Refused(StatusCodes.Status422UnprocessableEntity, "the text is not a StackExchange.Redis timeout or connection message");
            }

            var observed = pipeline.Submit(new TimeoutObservation(now, TimeoutSources.Api, report));
            return PostOutcome.Answered([TimeoutAnswer.From(observed)]);
        }

        var lines = text.Split('\n');
        var messageCount = lines.Count(line => !string.IsNullOrWhiteSpace(line));
        if (messageCount > limits.MaxMessagesPerRequest)
        {
            return PostOutcome.Refused(StatusCodes.Status413PayloadTooLarge, $"the body holds {messageCount} lines; at most {limits.MaxMessagesPerRequest} are accepted per request");
        }

        var results = new List<object>(messageCount);
        for (var i = 0; i < lines.Length; i++)
        {
            if (string.IsNullOrWhiteSpace(lines[i]))
            {
                continue;
            }

            if (!TryReadLine(lines[i], now, out var message, out var reportedAt, out var error))
            {
                results.Add(new LineErrorAnswer(i + 1, error));
                continue;
            }

            var report = TimeoutMessageReader.Read(message);
            results.Add(LooksLikeRedisMessage(report)
                ? TimeoutAnswer.From(pipeline.Submit(new TimeoutObservation(reportedAt, TimeoutSources.Api, report)))
                : new LineErrorAnswer(i + 1, "the message is not a StackExchange.Redis timeout or connection message"));
        }

        return PostOutcome.Answered(results);
    }

    /// <summary>A report counts as a Redis message when it has a known header or at least one field.</summary>
    private static bool LooksLikeRedisMessage(RedisErrorReport report) =>
        report.Kind != RedisErrorKind.Unknown || report.Fields.Count > 0;

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
            if (root.TryGetProperty("time", out var timeElement) && !TryReadTime(timeElement, out time))
            {
                error = "\"time\" is neither an ISO 8601 date nor unix seconds";
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

    private static bool TryReadTime(JsonElement element, out DateTimeOffset time)
    {
        time = default;
        switch (element.ValueKind)
        {
            case JsonValueKind.String:
                return DateTimeOffset.TryParse(element.GetString(), CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out time);
            case JsonValueKind.Number when element.TryGetDouble(out var seconds) && seconds is > 0 and < 253_402_300_799:
                time = DateTimeOffset.FromUnixTimeMilliseconds((long)(seconds * 1000));
                return true;
            default:
                return false;
        }
    }

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
        public static PostOutcome Refused(int status, string reason) => new(status, new ErrorAnswer(reason));

        /// <summary>200 with one result per message; 400 when no line was usable.</summary>
        public static PostOutcome Answered(IReadOnlyList<object> results)
        {
            var accepted = results.Count(result => result is TimeoutAnswer);
            return new PostOutcome(
                accepted == 0 ? StatusCodes.Status400BadRequest : StatusCodes.Status200OK,
                new PostAnswer(accepted, results.Count - accepted, results));
        }
    }
}
