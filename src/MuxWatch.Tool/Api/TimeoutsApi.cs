using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;
using MuxWatch.AspNetCore;
using MuxWatch.Hosting;
using MuxWatch.Json;
using MuxWatch.Pipeline;

namespace MuxWatch.Tool.Api;

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
    private const string PostPolicy = "muxwatch-post";

    public static IServiceCollection AddTimeoutsApi(this IServiceCollection services)
    {
        services.AddOptions<ApiOptions>().BindConfiguration(ApiOptions.SectionName).ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<ApiOptions>, ApiOptionsValidator>());
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

        // The status page at /: it holds no data and reads the API above, so it needs no token of its own
        // (it asks the user for the API's), and it is served wherever the API is.
        var page = endpoints.MapMuxWatchPage("/", "/api");
        if (endpoints.ServiceProvider.GetRequiredService<IOptions<ApiOptions>>().Value.Port is { } port)
        {
            api.RequireHost($"*:{port}"); // the API on a port of its own, e.g. one a network policy keeps private
            page.RequireHost($"*:{port}");
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
        if (!PostedBody.TryChooseForm(request.ContentType, out var declaredJsonLines))
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
                body = await PostedBody.ReadBoundedAsync(request.Body, limits.MaxBodyBytes, deadline.Token).ConfigureAwait(false);
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

        return PostedBody.TryDecode(body, out var text, out var problem)
            ? PostedMessages.Answer(text, declaredJsonLines, pipeline, time.GetUtcNow(), limits, details)
            : PostOutcome.Refused(StatusCodes.Status415UnsupportedMediaType, problem);
    }

    [LoggerMessage(EventId = 30, Level = LogLevel.Debug, Message = "A POST to /api/timeouts ended before its body arrived ({Reason}): the client went away")]
    private static partial void LogAborted(ILogger logger, string reason);
}
