using MuxWatch.Json;
using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.Reading;
using MuxWatch.Tool.Input;

namespace MuxWatch.Tool.Api;

/// <summary>
/// A posted body's messages, once it is text: one message, or JSON lines (<see cref="MessageLine"/>),
/// each submitted to the pipeline as source <c>api</c> and answered with its diagnosis. What is not a
/// Redis message is refused, on its line or as a whole, and nothing of it is recorded.
/// </summary>
internal static class PostedMessages
{
    /// <summary>Lines answered with their whole diagnosis when <c>?details=true</c>; the rest get a summary.</summary>
    internal const int MaxDetailedResults = 100;

    /// <summary>Fields a message without a known header must carry to count: <c>qs: 1</c> alone is not a Redis message.</summary>
    internal const int MinimumFieldsWithoutHeader = 3;

    public static PostOutcome Answer(string text, bool? declaredJsonLines, TimeoutPipeline pipeline, DateTimeOffset now, ApiOptions limits, bool details)
    {
        if (string.IsNullOrWhiteSpace(text))
        {
            return PostOutcome.Refused(StatusCodes.Status400BadRequest, "the body is empty: send one message as text, or JSON lines with a \"message\" string");
        }

        var isJsonLines = declaredJsonLines ?? text.AsSpan().TrimStart().StartsWith("{", StringComparison.Ordinal);
        return isJsonLines ? AnswerLines(text, pipeline, now, limits, details) : AnswerOne(text, pipeline, now);
    }

    private static PostOutcome AnswerOne(string text, TimeoutPipeline pipeline, DateTimeOffset now)
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

    private static PostOutcome AnswerLines(string text, TimeoutPipeline pipeline, DateTimeOffset now, ApiOptions limits, bool details)
    {
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

            if (!MessageLine.TryParse(PostedBody.WithoutByteOrderMark(lines[i]), now, out var parsed, out var error))
            {
                results.Add(new LineErrorAnswer(i + 1, error));
                continue;
            }

            if (parsed.TimeProblem is { } timeProblem)
            {
                results.Add(new LineErrorAnswer(i + 1, timeProblem));
                continue;
            }

            var line = RedisMessage.FromText(parsed.Message);
            if (!LooksLikeRedisMessage(line.Read()))
            {
                results.Add(new LineErrorAnswer(i + 1, "the message is not a StackExchange.Redis timeout or connection message"));
                continue;
            }

            // The answer stays about as large as the body: a summary per line, the whole diagnosis on
            // request (?details=true) for the first MaxDetailedResults lines.
            var observed = pipeline.Submit(new TimeoutObservation(parsed.Time ?? now, TimeoutSources.Api, line));
            results.Add(details && detailed++ < MaxDetailedResults ? TimeoutAnswer.From(observed) : LineSummaryAnswer.From(i + 1, observed));
        }

        return PostOutcome.Answered(results);
    }

    /// <summary>
    /// A report counts as a Redis message when it has a known header (a timeout, backlog or connection
    /// message), or, without one (a message pasted from its middle), at least
    /// <see cref="MinimumFieldsWithoutHeader"/> fields the client writes.
    /// </summary>
    private static bool LooksLikeRedisMessage(RedisErrorReport report) =>
        report.Kind != RedisErrorKind.Unknown || report.Fields.Count(field => FieldGlossary.Knows(field.Key)) >= MinimumFieldsWithoutHeader;
}
