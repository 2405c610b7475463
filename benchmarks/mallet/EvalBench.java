import cc.mallet.pipe.Noop;
import cc.mallet.topics.MarginalProbEstimator;
import cc.mallet.types.Alphabet;
import cc.mallet.types.FeatureSequence;
import cc.mallet.types.Instance;
import cc.mallet.types.InstanceList;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.FileInputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * Times what `mallet evaluate-topics` does (MarginalProbEstimator.evaluateLeftToRight, its defaults:
 * 10 particles, no resampling) on a workload written by benchmarks/heldout_vs_peers.py (the format of
 * LtrBench: a model as integer topic-word counts, its alpha and beta, and the documents).
 *
 * Usage: java EvalBench WORKLOAD PARTICLES RESAMPLE(true|false) SEED REPEATS
 * One untimed pass over all documents first (the JIT compiler), then REPEATS timed passes; prints
 * one line of the CPU seconds of each timed pass (this thread's CPU time), then the documents'
 * log-likelihoods of the first timed pass, one a line.
 */
public class EvalBench {

    /** MALLET's packed counts: (count << bits) | topic, largest count first. */
    static int topicBits(int topics) {
        int mask = Integer.bitCount(topics) == 1 ? topics - 1 : Integer.highestOneBit(topics) * 2 - 1;
        return Integer.bitCount(mask);
    }

    public static void main(String[] args) throws Exception {
        DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(args[0])));
        int particles = Integer.parseInt(args[1]);
        boolean resample = Boolean.parseBoolean(args[2]);
        int seed = Integer.parseInt(args[3]);
        int repeats = Integer.parseInt(args[4]);
        int topics = in.readInt();
        int types = in.readInt();
        double[] alpha = new double[topics];
        double alphaSum = 0;
        for (int t = 0; t < topics; t++) {
            alpha[t] = in.readDouble();
            alphaSum += alpha[t];
        }
        double beta = in.readDouble();
        int bits = topicBits(topics);
        int[][] typeTopicCounts = new int[types][];
        int[] tokensPerTopic = new int[topics];
        for (int w = 0; w < types; w++) {
            int k = in.readInt();
            long[] pairs = new long[k];
            for (int j = 0; j < k; j++) {
                int topic = in.readInt();
                int count = in.readInt();
                tokensPerTopic[topic] += count;
                pairs[j] = ((long) count << 32) | topic;
            }
            Arrays.sort(pairs);
            typeTopicCounts[w] = new int[k];
            for (int j = 0; j < k; j++) {
                long p = pairs[k - 1 - j];
                typeTopicCounts[w][j] = ((int) (p >>> 32) << bits) | (int) (p & 0xffffffffL);
            }
        }
        Alphabet alphabet = new Alphabet();
        for (int w = 0; w < types; w++) alphabet.lookupIndex("w" + w);
        InstanceList docs = new InstanceList(new Noop(alphabet, null));
        int count = in.readInt();
        for (int d = 0; d < count; d++) {
            int[] words = new int[in.readInt()];
            for (int n = 0; n < words.length; n++) words[n] = in.readInt();
            docs.add(new Instance(new FeatureSequence(alphabet, words), null, "d" + d, null));
        }
        MarginalProbEstimator evaluator =
            new MarginalProbEstimator(topics, alpha, alphaSum, beta, typeTopicCounts, tokensPerTopic);
        evaluator.setRandomSeed(seed);
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        evaluator.evaluateLeftToRight(docs, particles, resample, null);  // the JIT compiler's pass
        StringBuilder times = new StringBuilder();
        String perDocument = null;
        for (int rep = 0; rep < repeats; rep++) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            PrintStream out = new PrintStream(bytes, true, "UTF-8");
            long t0 = bean.getCurrentThreadCpuTime();
            evaluator.evaluateLeftToRight(docs, particles, resample, out);
            long t1 = bean.getCurrentThreadCpuTime();
            times.append(rep == 0 ? "" : " ").append((t1 - t0) / 1e9);
            if (perDocument == null) perDocument = bytes.toString("UTF-8");
        }
        System.out.println(times);
        System.out.print(perDocument);
    }
}
